"""binding/ and runtime/ : binding.parse and runtime.parse (§9.2, §9.1)."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry


# ----------------------------------------------------------------------------------------
# binding/ : binding.parse (§9.2, §8.6)

def cases_binding():
    g = "binding/"
    op = "binding.parse"
    base_text = ref_text("derived/01_tp_sharded_2d.binding.json")

    def P(name, desc, doc, tags=()):
        ok(g + name, op, desc, tags, document=doc)

    def X(name, desc, code, doc, path=None, tags=()):
        bad(g + name, op, desc, code, path, tags, document=doc)

    P("canonical-roundtrip", "The canonical binding JSON of model 01 parses back to exactly itself (§13.4).", base_text)
    P("pretty-roundtrip", "An indented binding JSON gives the canonical text.", pretty(BM01))
    P("fragments-reordered", "Fragments given out of order are emitted sorted by placement_fragment_id.", m(BM02, {"/fragments": BM02["fragments"][::-1]}), ["order"])
    P("overlap-not-checked", "Binding manifests do not check address overlap.", m(BM01, {"/fragments/2/address": BM01["fragments"][0]["address"]}), ["address"])
    P("no-fragments", "A binding manifest without fragments is valid.", m(BM01, {"/fragments": []}))
    P("address-top-of-range", "address 2^64-33 with nbytes 32 is accepted.", m(BM01, {"/fragments/3/address": U64 - 32, "/fragments/3/nbytes": 32}), ["u64"])

    X("top-missing-lease-id", "A binding manifest without lease_id does not have the eight keys.", "fields_mismatch", m(BM01, {"/lease_id": DEL}), "", ["structure"])
    X("top-extra-schema", "A schema member is not part of the binding wire form.", "fields_mismatch", m(BM01, {"/schema": "binding"}), "", ["structure"])
    X("fragment-missing-endpoint", "A binding fragment without endpoint does not have the seven keys.", "fields_mismatch", m(BM01, {"/fragments/2/endpoint": DEL}), "/fragments/2", ["structure"])
    X("fragment-extra-is-contiguous", "An inventory-only member in a binding fragment fails the key set.", "fields_mismatch", m(BM01, {"/fragments/0/is_contiguous": True}), "/fragments/0", ["structure"])
    X("fragment-not-an-object", "A binding fragment that is a string fails the key set.", "fields_mismatch", m(BM01, {"/fragments/1": "x"}), "/fragments/1", ["structure"])
    X("fragments-not-an-array", "fragments that is null fails SEQ(runtime binding fragments).", "not_a_sequence", m(BM01, {"/fragments": None}), "/fragments", ["structure"])
    X("generation-null", "generation is not nullable in a binding manifest.", "not_an_integer", m(BM01, {"/generation": None}), "/generation")
    X("lease-id-null", "lease_id is not nullable in a binding manifest.", "empty_string", m(BM01, {"/lease_id": None}), "/lease_id")
    X("placement-digest-empty", "An empty placement_digest fails STR first.", "empty_string", m(BM01, {"/placement_digest": ""}), "/placement_digest", ["digest"])
    X("digest-uppercase", "An uppercase placement_digest is rejected.", "digest_format", m(BM01, {"/placement_digest": BM01["placement_digest"].upper()}), None, ["digest"])
    X("digest-prefixed", "A sha256:-prefixed placement_digest is rejected.", "digest_format", m(BM01, {"/placement_digest": "sha256:" + BM01["placement_digest"]}), None, ["digest"])
    X("address-zero", "address 0 is the reserved null sentinel (§17).", "below_minimum", m(BM01, {"/fragments/1/address": 0}), "/fragments/1/address", ["address"])
    X("address-range-overflow", "address 2^64-32 with nbytes 32 has an unrepresentable end.", "address_range_overflow",
      m(BM01, {"/fragments/3/address": U64 - 31, "/fragments/3/nbytes": 32}), None, ["u64", "address"])
    X("worker-id-empty", "An empty worker_id fails STR.", "empty_string", m(BM01, {"/fragments/3/worker_id": ""}), "/fragments/3/worker_id")
    X("duplicate-binding-fragment", "Two fragments with one placement_fragment_id are rejected.", "duplicate_binding_fragment",
      m(BM01, {"/fragments/1/placement_fragment_id": BM01["fragments"][0]["placement_fragment_id"]}))
    X("duplicate-runtime-fragment-id", "Two fragments with one fragment_id are rejected.", "duplicate_runtime_fragment_id",
      m(BM01, {"/fragments/1/fragment_id": BM01["fragments"][0]["fragment_id"]}))
    X("order-fragments-before-model-id", "Fragment checks (§9.2 step 3) run before the manifest's strings (step 4).", "below_minimum",
      m(BM01, {"/model_id": "", "/fragments/0/address": 0}), "/fragments/0/address", ["order"])
    X("order-strings-before-generation", "In a binding manifest STR(model_id) runs before INT(generation) (unlike the inventory).", "empty_string",
      m(BM01, {"/model_id": "", "/generation": -1}), "/model_id", ["order"])
    X("order-digest-before-generation", "The placement_digest checks run before INT(generation).", "digest_format",
      m(BM01, {"/placement_digest": "abc", "/generation": -1}), None, ["order"])


# ----------------------------------------------------------------------------------------
# runtime/ : runtime.parse (§9.1, §8.4, §8.5)

def cases_runtime():
    g = "runtime/"
    op = "runtime.parse"

    def P(name, desc, doc, tags=()):
        ok(g + name, op, desc, tags, document=doc)

    def X(name, desc, code, doc, path=None, tags=()):
        bad(g + name, op, desc, code, path, tags, document=doc)

    def gens(doc, *values):
        return m(doc, {f"/fragments/{i}/lease_generation": v for i, v in enumerate(values)})

    P("canonical-roundtrip", "The canonical runtime JSON of model 01 parses back to exactly itself (§13.4).", ref_text("derived/01_tp_sharded_2d.runtime.json"))
    P("bound-runtime-roundtrip", "The bound runtime manifest of model 02 parses back to exactly itself.", ref_text("derived/02_moe_ep_pp.bound-runtime.json"))
    P("tied-alias-pair", "Model 03 with its exact declared alias pairs parses.", RM03, ["alias"])
    P("pretty", "An indented runtime manifest gives the canonical text.", pretty(RM01))
    P("generation-null-derived", "generation null becomes the fragments' common lease_generation (§8.4 step 7).", m(RM01, {"/generation": None}))
    P("generation-null-no-fragments", "Without fragments generation null stays null.", m(RM01, {"/generation": None, "/fragments": [], "/tensors": []}))
    P("generation-null-tensors-without-fragments", "Tensors without fragments leave nothing to derive generation null from: the result has no generation.",
      m(RM01, {"/generation": None, "/fragments": []}), ["generation"])
    P("generation-null-all-nullable-null", "generation, lease_id and placement_id all null without fragments: the result's generation is null, not 0.",
      m(RM01, {"/generation": None, "/lease_id": None, "/placement_id": None, "/fragments": []}), ["generation"])
    P("no-fragments-with-generation", "A runtime manifest without fragments keeps its generation.", m(RM01, {"/generation": 11, "/fragments": []}))
    P("lease-id-and-placement-id-null", "lease_id and placement_id may be null.", m(RM01, {"/lease_id": None, "/placement_id": None}))
    P("placement-id-not-checked", "A runtime manifest's placement_id is not compared with the canonical id (§8.4).", m(RM01, {"/placement_id": "sha256:" + "f" * 64}))
    P("non-canonical-spelling", "A descriptor spelled partition_dim 0, shard_dims null is emitted canonical.", m(RM01, {"/tensors/0/shard_dims": None}), ["canonical"])
    P("replicated-spelling-null", "A replicated descriptor with shard_dims null is emitted with shard_dims [].", m(RM01, {"/tensors/1/shard_dims": None}), ["canonical"])
    P("aliases-sorted", "Aliases are emitted sorted.", m(RM03, {"/fragments/0/aliases": RM03["fragments"][0]["aliases"][::-1],
                                                                "/fragments/1/aliases": RM03["fragments"][1]["aliases"][::-1]}), ["alias"])
    P("fragments-not-resorted", "Fragments keep manifest order (not re-sorted).", m(RM01, {"/fragments": RM01["fragments"][::-1]}), ["order"])
    P("tensors-not-resorted", "Tensors keep manifest order (not re-sorted).", m(RM01, {"/tensors": RM01["tensors"][::-1]}), ["order"])
    P("explicit-placement-fragment-id-null", "placement_fragment_id null means not set.", m(RM01, {"/fragments/0/placement_fragment_id": None}))

    X("top-missing-generation", "generation must be present (it may be null).", "fields_mismatch", m(RM01, {"/generation": DEL}), "", ["structure"])
    X("top-extra-key", "An unknown top-level member fails the eight keys.", "fields_mismatch", m(RM01, {"/owner": None}), "", ["structure"])
    X("tensor-missing-shard-dims", "A runtime tensor without shard_dims fails the nine keys.", "fields_mismatch", m(RM01, {"/tensors/1/shard_dims": DEL}), "/tensors/1", ["structure"])
    X("tensor-extra-key", "A runtime tensor with an unknown member fails the nine keys.", "fields_mismatch", m(RM01, {"/tensors/0/owner": None}), "/tensors/0", ["structure"])
    X("rank-extra-key", "A runtime rank with an unknown member fails the rank key set.", "fields_mismatch", m(RM01, {"/fragments/0/rank/world": 2}), "/fragments/0/rank", ["structure"])
    X("fragment-missing-placement-fragment-id", "placement_fragment_id must be present (it may be null).", "fields_mismatch",
      m(RM01, {"/fragments/2/placement_fragment_id": DEL}), "/fragments/2", ["structure"])
    X("fragment-extra-owner", "owner is never serialised, so it fails the fragment key set.", "fields_mismatch", m(RM01, {"/fragments/0/owner": None}), "/fragments/0", ["structure"])
    X("fragment-not-an-object", "A fragment that is a number fails the fragment key set.", "fields_mismatch", m(RM01, {"/fragments/3": 1}), "/fragments/3", ["structure"])
    X("rank-missing-dp", "A runtime rank without dp fails the rank key set.", "fields_mismatch", m(RM01, {"/fragments/1/rank/dp": DEL}), "/fragments/1/rank", ["structure"])
    X("rank-not-an-object", "A runtime rank that is a list fails the rank key set.", "fields_mismatch", m(RM01, {"/fragments/1/rank": [0, 0, 0, 0]}), "/fragments/1/rank", ["structure"])
    X("tensors-not-an-array", "tensors that is a string fails SEQ(runtime tensors).", "not_a_sequence", m(RM01, {"/tensors": "x"}), "/tensors", ["structure"])
    X("fragments-null", "fragments that is null fails SEQ(runtime fragments).", "not_a_sequence", m(RM01, {"/fragments": None}), "/fragments", ["structure"])
    X("aliases-null", "aliases null fails ALIASES in a runtime manifest.", "aliases_invalid", m(RM01, {"/fragments/0/aliases": None}), "/fragments/0/aliases", ["aliases"])
    X("aliases-duplicate", "Duplicate aliases are rejected.", "aliases_duplicate", m(RM01, {"/fragments/0/aliases": ["a", "a"]}), "/fragments/0/aliases", ["aliases"])
    X("placement-fragment-id-empty", "An empty explicit placement_fragment_id fails STR.", "empty_string",
      m(RM01, {"/fragments/1/placement_fragment_id": ""}), "/fragments/1/placement_fragment_id")
    X("address-zero", "address 0 is the reserved null sentinel.", "below_minimum", m(RM01, {"/fragments/0/address": 0}), "/fragments/0/address", ["address"])
    X("address-range-overflow", "An address range ending past 2^64-1 is rejected.", "address_range_overflow",
      m(RM01, {"/fragments/1/address": U64 - 15}), None, ["u64", "address"])
    X("endpoint-empty", "An empty endpoint fails STR.", "empty_string", m(RM01, {"/fragments/2/endpoint": ""}), "/fragments/2/endpoint")
    X("lease-generation-negative", "A negative lease_generation fails INT.", "below_minimum", m(RM01, {"/fragments/0/lease_generation": -1}), "/fragments/0/lease_generation")
    X("itemsize-zero", "itemsize 0 fails INT(itemsize, 1).", "below_minimum", m(RM01, {"/tensors/0/itemsize": 0}), "/tensors/0/itemsize", ["descriptor"])
    X("partition-dim-conflict", "partition_dim 0 with shard_dims [1] conflicts.", "partition_dim_conflict", m(RM01, {"/tensors/0/shard_dims": [1]}), "/tensors/0/shard_dims", ["descriptor"])
    X("global-shape-empty", "An empty global_shape is empty_shape.", "empty_shape", m(RM01, {"/tensors/1/global_shape": []}), "/tensors/1/global_shape", ["descriptor"])
    X("instance-id-empty", "An empty instance_id fails STR.", "empty_string", m(RM01, {"/instance_id": ""}), "/instance_id")
    X("lease-id-empty", "An empty lease_id fails STR.", "empty_string", m(RM01, {"/lease_id": ""}), "/lease_id")
    X("placement-id-empty", "An empty placement_id fails STR.", "empty_string", m(RM01, {"/placement_id": ""}), "/placement_id")
    X("generation-negative", "A negative generation fails INT.", "below_minimum", m(RM01, {"/generation": -1}), "/generation")
    X("order-lease-id-before-generation", "STR(lease_id) runs before INT(generation).", "empty_string", m(RM01, {"/lease_id": "", "/generation": -1}), "/lease_id", ["order"])
    X("order-fragments-before-model-id", "Fragment checks run before the manifest's strings.", "below_minimum",
      m(RM01, {"/model_id": "", "/fragments/3/address": 0}), "/fragments/3/address", ["order"])
    X("inconsistent-lease-generations", "Fragments with two lease generations are rejected (generation null).", "inconsistent_lease_generations",
      gens(m(RM01, {"/generation": None}), 3, 3, 4, 3), None, ["lease"])
    X("inconsistent-lease-generations-with-generation", "Two lease generations are rejected even when one equals generation.", "inconsistent_lease_generations",
      gens(RM01, 3, 5, 3, 3), None, ["lease"])
    X("generation-mismatch", "A generation that differs from the common lease_generation is rejected.", "generation_mismatch",
      m(RM01, {"/generation": 4}), None, ["lease"])
    X("generation-mismatch-tied", "Model 03 with generation 0 while its fragments carry 1 is rejected.", "generation_mismatch",
      m(RM03, {"/generation": 0}), None, ["lease"])
    X("order-generation-before-fragment-set", "The generation rule (step 7) runs before the fragment-set rules (step 8).", "generation_mismatch",
      m(RM01, {"/generation": 4, "/tensors/2": RM01["tensors"][0]}), None, ["order"])
    X("duplicate-tensor-id", "A tensor listed twice is rejected (T1).", "duplicate_tensor_id", m(RM01, {"/tensors/2": RM01["tensors"][1]}), None, ["fragment-set"])
    X("unknown-tensor-id", "A fragment of an unlisted tensor is rejected (F3).", "unknown_tensor_id", m(RM01, {"/tensors": RM01["tensors"][:1]}), None, ["fragment-set"])
    X("duplicate-fragment-id", "Two fragments with one fragment_id are rejected (F1).", "duplicate_fragment_id",
      m(RM01, {"/fragments/3/fragment_id": RM01["fragments"][1]["fragment_id"]}), None, ["fragment-set"])
    X("duplicate-logical-fragment", "Two fragments of one tensor, rank and box are rejected (F2).", "duplicate_logical_fragment",
      m(RM01, {"/fragments/3/rank": RK()}), None, ["fragment-set"])
    X("fragment-out-of-bounds", "A box past the tensor end is rejected (F5).", "fragment_out_of_bounds", m(RM01, {"/fragments/2/global_offset": [9, 0]}), None, ["fragment-set"])
    X("nbytes-mismatch", "nbytes that is not the box's byte size is rejected (F8).", "nbytes_mismatch", m(RM01, {"/fragments/1/nbytes": 32}), None, ["fragment-set"])
    X("fragment-overlap", "Overlapping boxes on one rank are rejected (§8.3).", "fragment_overlap",
      m(RM01, {"/fragments/2/rank": RK(), "/fragments/2/global_offset": [4, 0]}), None, ["fragment-set", "overlap"])
    X("address-overlap", "Overlapping byte ranges on one worker and device are rejected.", "address_overlap",
      m(RM01, {"/fragments/1/address": RM01["fragments"][0]["address"] + 112}), None, ["address"])
    X("address-overlap-two-endpoints", "Two endpoints of one worker and device share an address space.", "address_overlap",
      m(RM01, {"/fragments/2/worker_id": "worker-tp0", "/fragments/2/device": "cuda:0", "/fragments/2/endpoint": "10.0.0.1:17001"}), None, ["address"])
    X("alias-near-miss-one-name", "Tied fragments whose alias lists have one name do not qualify as an alias pair.", "address_overlap",
      m(RM03, {"/fragments/0/aliases": ["lm_head.weight"], "/fragments/1/aliases": ["lm_head.weight"]}), None, ["alias", "address"])
    X("alias-near-miss-dtype", "Tied fragments whose descriptors differ in dtype do not qualify.", "address_overlap",
      m(RM03, {"/tensors/0/dtype": "float16"}), None, ["alias", "address"])
    X("order-fragment-set-before-address", "The fragment-set rules run before the address rules.", "nbytes_mismatch",
      m(RM01, {"/fragments/1/address": RM01["fragments"][0]["address"] + 112, "/fragments/3/nbytes": 8}), None, ["order"])
