"""project/ and bind/ : the projections (§11) and bind (§12)."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry


# ----------------------------------------------------------------------------------------
# project/ : project.placement and project.binding (§11)

def cases_project():
    g = "project/"
    PP, PBD = "project.placement", "project.binding"
    pid01, pidw2 = ID01["placement_id"], ref_json("w2.expected.json")["placement_id"]
    moved = m(RI01, {"/instance_id": "another-instance", "/generation": 8, "/lease_id": "lease-8",
                     **{f"/tensors/{i}/{k}": v for i in range(4) for k, v in (
                         ("lease_generation", 8), ("address", 4096 + 4096 * i), ("worker_id", f"host-{i}"),
                         ("endpoint", f"h{i}:1"), ("device", "cuda:7"), ("fragment_id", f"new-{i}"))}})

    def P(name, op, desc, doc, tags=(), **kw):
        ok(g + name, op, desc, tags, document=doc, **kw)

    def X(name, op, desc, code, doc, path=None, tags=(), **kw):
        bad(g + name, op, desc, code, path, tags, document=doc, **kw)

    P("placement-argument-correct", PP, "The canonical id given as the argument is accepted.", RI01, placement_id=pid01)
    P("placement-argument-null", PP, "An argument of null means not given.", RI01, placement_id=None)
    P("placement-inventory-id-correct", PP, "The inventory's own placement_id equal to the canonical id is accepted.", m(RI01, {"/placement_id": pid01}))
    P("placement-argument-overrides-inventory", PP, "The argument is used instead of the inventory's (wrong) placement_id (§11.1 step 3).",
      m(RI01, {"/placement_id": "sha256:" + "0" * 64}), placement_id=pid01, tags=["order"])
    P("placement-physical-independence", PP, "Other instance, generation, lease, addresses, workers, devices and fragment_ids give the same placement.",
      moved, placement_id=pid01)
    P("placement-view-offsets", PP, "Offsets under 'view' do not enter the placement.", m(RI01, {"/tensors/0/storage_offset": 8}), address_semantics="view", tags=["view"])
    P("placement-generated-ids", PP, "Records without placement_fragment_id get logical ids (W2).", RIW2, placement_id=pidw2)
    P("placement-mixed-ids", PP, "Explicit and generated placement_fragment_ids can be mixed.",
      m(RI01, {"/tensors/1/placement_fragment_id": DEL, "/tensors/3/placement_fragment_id": None}))
    P("placement-tied-aliases", PP, "The tied-embedding inventory projects with its aliases in the logical ids.", TIED, tags=["alias", "realistic"])
    P("binding-argument-correct", PBD, "project.binding with the canonical id as argument.", RI01, placement_id=pid01)
    P("binding-physical-moved", PBD, "A moved runtime inventory projects to a binding with the same placement_id and digest.", moved)
    P("binding-generated-ids", PBD, "project.binding on the tied inventory carries the logical ids.", TIED, tags=["alias"])
    P("binding-view-offsets", PBD, "project.binding under 'view' with offsets.", m(TIED, {"/tensors/2/byte_offset": 2}), address_semantics="view", tags=["view"])

    X("placement-argument-wrong", PP, "An argument that is not the canonical id is rejected.", "placement_id_mismatch", RI01, placement_id=ID02["placement_id"])
    X("placement-argument-empty", PP, "An empty argument fails STR(placement_id) (§11.1 step 2).", "empty_string", RI01, placement_id="")
    X("placement-argument-digest", PP, "The digest given as the argument is rejected.", "placement_id_mismatch", RI01, placement_id=ID01["digest"])
    X("placement-inventory-id-wrong", PP, "A wrong placement_id in the inventory is rejected by the projection.", "placement_id_mismatch",
      m(RI01, {"/placement_id": pidw2}))
    X("placement-duplicate-explicit-id", PP, "Two runtime fragments with one explicit placement_fragment_id fail at projection (§11.1).", "duplicate_fragment_id",
      m(RI01, {"/tensors/2/placement_fragment_id": "gate_up_proj/tp0"}), tags=["fragment-set"])
    X("placement-explicit-id-equals-generated", PP, "An explicit id equal to another fragment's generated logical id is a duplicate.", "duplicate_fragment_id",
      m(TIED, {"/tensors/2/placement_fragment_id": logical_id(runtime_fragment(TIED["tensors"][0]))}), tags=["fragment-set"])
    X("placement-inventory-error-first", PP, "The inventory is read (and fails) before the argument is checked.", "non_canonical_stride",
      m(RI01, {"/tensors/0/stride": [1, 8]}), "/tensors/0/stride", ["order"], placement_id="")
    X("placement-stride-rank-mismatch", PP, "A stride rank mismatch in the inventory fails the projection.", "stride_rank_mismatch",
      m(RI01, {"/tensors/1/stride": [1, 1]}), "/tensors/1/stride", ["stride"])
    X("placement-byte-offset-unaligned", PP, "An unaligned byte_offset fails the projection.", "byte_offset_unaligned",
      m(RI01, {"/tensors/1/byte_offset": 1}), "/tensors/1/byte_offset", ["view"], address_semantics="view")
    X("placement-option-invalid", PP, "An invalid address_semantics fails the projection.", "address_semantics_invalid", RI01, address_semantics="VIEW")
    X("placement-not-contiguous", PP, "A non-contiguous record fails the projection.", "not_contiguous",
      m(RI01, {"/tensors/2/is_contiguous": False}), "/tensors/2/is_contiguous", ["view"])
    X("binding-missing-lease-id", PBD, "A runtime manifest without lease_id cannot give a binding.", "missing_lease_id", m(RI01, {"/lease_id": DEL}), tags=["lease"])
    X("binding-null-lease-id", PBD, "lease_id null is not set, so no binding can be made.", "missing_lease_id", m(TIED, {"/lease_id": None}), tags=["lease"])
    X("binding-missing-lease-id-before-argument", PBD, "missing_lease_id (§11.2 step 1) wins over a wrong argument.", "missing_lease_id",
      m(RI01, {"/lease_id": DEL}), placement_id="sha256:wrong", tags=["order"])
    X("binding-argument-wrong", PBD, "A wrong argument fails the binding projection.", "placement_id_mismatch", RI01, placement_id=pidw2)
    X("binding-argument-empty", PBD, "An empty argument fails STR(placement_id).", "empty_string", TIED, placement_id="")
    X("binding-inventory-id-wrong", PBD, "A wrong inventory placement_id fails the binding projection.", "placement_id_mismatch",
      m(TIED, {"/placement_id": pid01}))
    X("binding-duplicate-explicit-id", PBD, "Duplicate explicit placement_fragment_ids fail the binding projection.", "duplicate_fragment_id",
      m(RI01, {"/tensors/3/placement_fragment_id": "post_attention_layernorm/tp0"}), tags=["fragment-set"])
    X("binding-address-overlap", PBD, "An address overlap in the inventory fails the binding projection.", "address_overlap",
      m(TIED, {"/tensors/1/aliases": [EMB]}), tags=["alias", "address"])
    X("binding-byte-offset-unaligned", PBD, "An unaligned byte_offset fails the binding projection.", "byte_offset_unaligned",
      m(TIED, {"/tensors/0/byte_offset": 3}), "/tensors/0/byte_offset", ["view"], address_semantics="view")
    X("binding-non-canonical-stride", PBD, "A non-canonical stride fails the binding projection.", "non_canonical_stride",
      m(TIED, {"/tensors/2/stride": [2]}), "/tensors/2/stride", ["stride"])


# ----------------------------------------------------------------------------------------
# bind/ : bind (§12)

def cases_bind():
    g = "bind/"
    op = "bind"
    p01, p02, p03 = ref_text("01_tp_sharded_2d.placement.json"), ref_text("02_moe_ep_pp.placement.json"), ref_text("03_tied_aliases.placement.json")

    def P(name, desc, placement, binding, tags=(), **kw):
        ok(g + name, op, desc, tags, placement=placement, binding=binding, **kw)

    def X(name, desc, code, placement, binding, tags=(), **kw):
        bad(g + name, op, desc, code, None, tags, placement=placement, binding=binding, **kw)

    def BF(i, **changes):
        return {f"/fragments/{i}/{k}": v for k, v in changes.items()}

    P("pretty-placement", "An indented placement binds like its canonical text.", ref_text("01_tp_sharded_2d.placement.pretty.json"), BI01)
    P("non-canonical-placement", "A placement with reordered content and non-canonical spellings binds (the digest is of the normalised form).",
      m(P01, {"/fragments": P01["fragments"][::-1], "/tensors/0/shard_dims": None}), BI01, ["canonical"])
    P("binding-reordered", "The order of the binding's fragments does not affect the result.", p01, m(BI01, {"/fragments": BI01["fragments"][::-1]}), ["order"])
    P("rebind-new-physical", "A new instance, generation, lease and addresses bind to the same placement (§13.3).", p01,
      m(BI01, {"/instance_id": "restarted", "/generation": 4, "/lease_id": "lease-4",
               **{f"/fragments/{i}/{k}": v for i in range(4) for k, v in (("lease_generation", 4), ("address", 8192 * (i + 1)), ("fragment_id", f"r{i}"))}}))
    P("one-rank-over-many-workers", "The fragments of one rank may live on several workers and devices.", p01,
      m(BI01, BF(2, worker_id="worker-tp0-b", device="cuda:2", endpoint="10.0.0.3:17000")), ["realistic"])
    P("empty-placement-empty-binding", "An empty placement with an empty binding gives an empty runtime manifest with the binding's generation and lease_id (§12).",
      ref_text("empty.placement.json"),
      {"model_id": "m", "revision": "r", "placement_id": ref_json("empty.expected.json")["placement_id"],
       "placement_digest": ref_json("empty.expected.json")["digest"], "instance_id": "i", "generation": 6, "lease_id": "l", "fragments": []})
    P("view-offsets", "Binding records with offsets bind under 'view'.", p03, m(BI03, BF(0, storage_offset=16)), ["view"], address_semantics="view")
    P("lease-generation-absent", "Binding records without lease_generation take the binding generation as the fence.", p02,
      m(BI02, {f"/fragments/{i}/lease_generation": DEL for i in range(len(BI02["fragments"]))}), ["lease"])

    X("model-id-mismatch", "A binding for another model_id is rejected.", "model_id_mismatch", p01, m(BI01, {"/model_id": "example/other"}))
    X("model-id-mismatch-tied", "A binding with the model_id of model 01 for placement 03 is rejected.", "model_id_mismatch", p03, m(BI03, {"/model_id": ID01["model_id"]}))
    X("order-model-id-before-revision", "model_id is compared before revision.", "model_id_mismatch", p01, m(BI01, {"/model_id": "x", "/revision": "y"}), ["order"])
    X("revision-mismatch", "A binding for another revision is rejected.", "revision_mismatch", p01, m(BI01, {"/revision": "rev-2024-02"}))
    X("revision-mismatch-moe", "A binding for another revision of the MoE model is rejected.", "revision_mismatch", p02, m(BI02, {"/revision": "main"}))
    X("order-revision-before-placement-id", "revision is compared before placement_id.", "revision_mismatch", p01, m(BI01, {"/revision": "y", "/placement_id": "z"}), ["order"])
    X("placement-id-mismatch", "A binding naming another placement_id is rejected.", "binding_placement_id_mismatch", p01, m(BI01, {"/placement_id": ID02["placement_id"]}))
    X("placement-id-mismatch-free-form", "A binding with a free-form placement_id is rejected by bind.", "binding_placement_id_mismatch", p03, m(BI03, {"/placement_id": "tied"}))
    X("order-placement-id-before-digest", "placement_id is compared before the digest.", "binding_placement_id_mismatch", p01,
      m(BI01, {"/placement_id": "z", "/placement_digest": "0" * 64}), ["order"])
    X("digest-mismatch", "A binding with the digest of another placement is rejected.", "digest_mismatch", p01, m(BI01, {"/placement_digest": ID02["digest"]}))
    X("digest-mismatch-zero", "An all-zero digest is well-formed but does not match.", "digest_mismatch", p02, m(BI02, {"/placement_digest": "0" * 64}))
    X("order-digest-before-fragments", "The digest is compared before the fragments.", "digest_mismatch", p01,
      m(BI01, {"/placement_digest": "0" * 64, "/fragments": []}), ["order"])
    X("unknown-binding-fragment", "A binding fragment whose id is not in the placement is rejected.", "unknown_binding_fragment", p01,
      m(BI01, {"/fragments/4": m(BI01["fragments"][0], {"/placement_fragment_id": "gate_up_proj/tp2", "/fragment_id": "extra"})}))
    X("order-unknown-before-missing", "A renamed fragment is unknown (step 5) before the original is missing (step 6).", "unknown_binding_fragment", p01,
      m(BI01, BF(1, placement_fragment_id="gate_up_proj/TP1")), ["order"])
    X("missing-binding-fragment", "A placement fragment without a binding fragment is rejected.", "missing_binding_fragment", p01,
      m(BI01, {"/fragments/3": DEL}))
    X("missing-binding-fragment-moe", "A MoE binding that lacks one expert fragment is rejected.", "missing_binding_fragment", p02,
      m(BI02, {"/fragments/7": DEL}), ["realistic"])
    X("order-missing-before-nbytes", "A missing fragment (step 6) is reported before an nbytes mismatch (step 7).", "missing_binding_fragment", p01,
      m(BI01, {"/fragments/3": DEL} | BF(0, nbytes=64)), ["order"])
    X("binding-nbytes-mismatch", "A binding fragment whose nbytes differs from the placement is rejected.", "binding_nbytes_mismatch", p01, m(BI01, BF(2, nbytes=32)))
    X("binding-nbytes-mismatch-tied", "A tied binding fragment with twice the bytes is rejected.", "binding_nbytes_mismatch", p03, m(BI03, BF(5, nbytes=512)))
    X("order-nbytes-before-overlap", "nbytes is compared (step 7) before address overlap (step 9).", "binding_nbytes_mismatch", p01,
      m(BI01, BF(0, nbytes=64) | BF(2, worker_id="worker-tp0", device="cuda:0", address=BI01["fragments"][0]["address"] + 8)), ["order"])
    X("address-overlap", "Binding two fragments to overlapping ranges on one worker and device fails at bind.", "address_overlap", p01,
      m(BI01, BF(2, address=BI01["fragments"][0]["address"] + 64)), ["address"])
    X("address-overlap-across-ranks", "Fragments of two TP ranks bound to one worker and device at one address overlap.", "address_overlap", p01,
      m(BI01, BF(1, worker_id="worker-tp0", device="cuda:0")), ["address"])
    assert any(f["fragment_id"] == "rt/worker-dp0-tp0/lm_head.weight" for f in BI03["fragments"])
    X("address-overlap-tied-shifted", "A tied pair whose second half is bound 16 bytes later is a partial overlap.", "address_overlap", p03,
      m(BI03, {f"/fragments/{i}/address": f["address"] + 16 for i, f in enumerate(BI03["fragments"]) if f["fragment_id"] == "rt/worker-dp0-tp0/lm_head.weight"}), ["alias", "address"])
    X("placement-error-first", "The placement is parsed before the binding inventory is read.", "fields_mismatch", m(P01, {"/schema": "x"}), "[]", ["order"])
    X("placement-invalid-json", "An invalid placement text fails bind.", "invalid_json", p01 + ",", BI01, ["reader"])
    X("placement-id-mismatch-in-placement", "A placement document whose own placement_id is wrong fails bind.", "placement_id_mismatch",
      m(P01, {"/placement_id": ID03["placement_id"]}), BI01)
    X("binding-option-invalid", "An invalid address_semantics fails the binding inventory read.", "address_semantics_invalid", p01, BI01, address_semantics="")
    X("binding-offsets-without-view", "Binding offsets without 'view' fail the binding inventory read.", "offsets_require_view_semantics", p01, m(BI01, BF(0, byte_offset=2)), ["view"])
    X("binding-digest-format", "A malformed placement_digest fails before bind compares anything.", "digest_format", p01, m(BI01, {"/placement_digest": ID01["digest"].upper()}), ["digest"])
    X("binding-lease-mismatch", "A binding record lease_generation mismatch fails the binding inventory read.", "lease_generation_mismatch", p02, m(BI02, BF(0, lease_generation=11)), ["lease"])
    X("binding-duplicate-fragment", "A duplicate binding fragment fails the binding construction before bind.", "duplicate_binding_fragment", p01,
      m(BI01, {"/fragments/4": BI01["fragments"][0]}))
