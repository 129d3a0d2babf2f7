"""placement_inventory/ and binding_inventory/ : the placement and binding inventory readers (§10.5, §10.4)."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry


# ----------------------------------------------------------------------------------------
# placement_inventory/ : placement.from_inventory (§10.5)

def cases_placement_inventory():
    g = "placement_inventory/"
    op = "placement.from_inventory"
    # The TP=2 block as a placement inventory: one record per fragment, descriptor members
    # inline (shard_dims left out: it is optional here).
    descs = {t["tensor_id"]: {k: v for k, v in t.items() if k != "shard_dims"} for t in PB["tensors"]}
    PI = {"model_id": "example/dense-tp2", "revision": "r1",
          "tensors": [dict(descs[f["tensor_id"]], **{k: f[k] for k in (
              "placement_fragment_id", "global_offset", "local_shape", "nbytes", "rank")})
              for f in PB["fragments"]]}

    def P(name, desc, doc, tags=()):
        ok(g + name, op, desc, tags, document=doc)

    def X(name, desc, code, doc, path=None, tags=()):
        bad(g + name, op, desc, code, path, tags, document=doc)

    P("tp2-dense-block", "A placement inventory of the TP=2 block gives the same placement as the wire form.", PI, ["realistic"])
    P("records-reordered", "Records in reverse order give the same placement.", m(PI, {"/tensors": PI["tensors"][::-1]}), ["order"])
    P("runtime-inventory-with-explicit-ids", "A runtime inventory whose records all carry placement_fragment_id is a valid placement inventory (§10.5 note).", RI01)
    P("physical-members-ignored", "Physical members (address 0, is_contiguous false, bad stride, other lease_generation) are not read.",
      m(RI01, {"/tensors/0/address": 0, "/tensors/0/is_contiguous": False, "/tensors/1/stride": "x",
               "/tensors/2/lease_generation": -1, "/generation": None, "/instance_id": ""}))
    P("ignored-members-any-value", "Numbers like 1e400 and 2^70 in ignored members are never checked.",
      m(PI, {"/tensors/0/scale": Raw("1e400"), "/tensors/1/serial": 2**70}))
    P("descriptor-spellings-merged", "partition_dim 0 and shard_dims [0] on two records of one tensor are merged.",
      m(PI, {"/tensors/1/partition_dim": None, "/tensors/1/shard_dims": [0]}), ["canonical"])
    P("placement-id-given", "A placement_id equal to the canonical id is accepted.", m(PI, {"/placement_id": PB_ID}))
    P("placement-id-null", "placement_id null means compute.", m(PI, {"/placement_id": None}))
    P("aliases-and-optional-nulls", "aliases null and layer_id null are not set; unsorted aliases are sorted.",
      m(PI, {"/tensors/0/aliases": ["z", "a"], "/tensors/1/aliases": None}))
    P("empty-inventory", "No records give the empty placement.", {"model_id": "m", "revision": "r", "tensors": []})

    X("tensors-missing", "A placement inventory without tensors lacks a required member.", "missing_field", m(PI, {"/tensors": DEL}), "")
    X("tensors-string", "tensors that is a string fails SEQ(placement inventory tensors).", "not_a_sequence", m(PI, {"/tensors": "x"}), "/tensors")
    X("record-not-an-object", "A record that is a string reads as an empty object: missing_field.", "missing_field", m(PI, {"/tensors/2": "x"}), "/tensors/2", ["structure"])
    X("record-missing-tensor-id", "A record without tensor_id lacks a required member.", "missing_field", m(PI, {"/tensors/0/tensor_id": DEL}), "/tensors/0", ["structure"])
    X("record-missing-partition-dim", "partition_dim is required even though it may be null.", "missing_field", m(PI, {"/tensors/4/partition_dim": DEL}), "/tensors/4", ["structure"])
    X("record-missing-placement-fragment-id", "A record without placement_fragment_id lacks a required member (W2 inventory).", "missing_field", RIW2, "/tensors/0", ["structure"])
    X("record-null-placement-fragment-id", "placement_fragment_id null fails STR in a placement inventory (§10.5 note).", "empty_string",
      m(PI, {"/tensors/1/placement_fragment_id": None}), "/tensors/1/placement_fragment_id")
    X("record-missing-rank", "A record without rank lacks a required member.", "missing_field", m(PI, {"/tensors/3/rank": DEL}), "/tensors/3", ["structure"])
    X("rank-missing-dp", "A rank without dp lacks a required member.", "missing_field", m(PI, {"/tensors/0/rank/dp": DEL}), "/tensors/0/rank", ["structure"])
    X("rank-not-an-object", "A rank that is an array reads as an empty object.", "missing_field", m(PI, {"/tensors/0/rank": [0, 0, 0, 0]}), "/tensors/0/rank", ["structure"])
    X("order-fragment-members-before-rank-members", "placement_fragment_id is read before the rank's members.", "missing_field",
      m(PI, {"/tensors/0/placement_fragment_id": DEL, "/tensors/0/rank": {}}), "/tensors/0", ["order"])
    X("order-descriptor-reads-before-checks", "All descriptor members are read before the checks run.", "missing_field",
      m(PI, {"/tensors/0/dtype": DEL, "/tensors/0/global_shape": []}), "/tensors/0", ["order"])
    X("itemsize-null", "itemsize null fails INT(itemsize, 1).", "not_an_integer", m(PI, {"/tensors/0/itemsize": None}), "/tensors/0/itemsize", ["descriptor"])
    X("global-shape-empty", "An empty global_shape is empty_shape.", "empty_shape", m(PI, {"/tensors/3/global_shape": []}), "/tensors/3/global_shape", ["descriptor"])
    X("partition-dim-out-of-range", "partition_dim 1 on a 1-D tensor is out of range.", "partition_dim_out_of_range", m(PI, {"/tensors/4/partition_dim": 1}), "/tensors/4/partition_dim", ["descriptor"])
    X("shard-dims-unsorted", "shard_dims [1, 0] is unsorted.", "shard_dims_unsorted", m(PI, {"/tensors/0/partition_dim": None, "/tensors/0/shard_dims": [1, 0]}), "/tensors/0/shard_dims", ["descriptor"])
    X("shard-dims-duplicate", "shard_dims [1, 1] has a duplicate.", "shard_dims_duplicate", m(PI, {"/tensors/2/partition_dim": None, "/tensors/2/shard_dims": [1, 1]}), "/tensors/2/shard_dims", ["descriptor"])
    X("shard-dims-out-of-range", "shard_dims [0, 2] names a dimension past ndim.", "shard_dims_out_of_range", m(PI, {"/tensors/0/partition_dim": None, "/tensors/0/shard_dims": [0, 2]}), "/tensors/0/shard_dims", ["descriptor"])
    X("partition-dim-conflict", "partition_dim 0 with shard_dims [] conflicts.", "partition_dim_conflict", m(PI, {"/tensors/0/shard_dims": []}), "/tensors/0/shard_dims", ["descriptor"])
    X("descriptor-mismatch-itemsize", "A second record of one tensor with another itemsize is a descriptor mismatch.", "descriptor_mismatch",
      m(PI, {"/tensors/1/itemsize": 4}), "/tensors/1", ["descriptor"])
    X("descriptor-mismatch-fingerprint", "A second record of one tensor with another layout_fingerprint is a descriptor mismatch.", "descriptor_mismatch",
      m(RI01, {"/tensors/3/layout_fingerprint": "hf:bf16:v2"}), "/tensors/3", ["descriptor"])
    X("order-descriptor-mismatch-before-rank", "descriptor_mismatch (step 3.2) wins over a missing rank (step 3.3).", "descriptor_mismatch",
      m(PI, {"/tensors/1/dtype": "float16", "/tensors/1/rank": DEL}), "/tensors/1", ["order"])
    X("aliases-string", "aliases that is not an array is rejected when read.", "aliases_invalid", m(PI, {"/tensors/0/aliases": "x"}), "/tensors/0/aliases", ["aliases"])
    X("aliases-duplicate", "Duplicate aliases are rejected.", "aliases_duplicate", m(PI, {"/tensors/5/aliases": ["x", "x"]}), "/tensors/5/aliases", ["aliases"])
    X("rank-tp-negative", "A negative tp coordinate fails INT.", "below_minimum", m(PI, {"/tensors/1/rank/tp": -1}), "/tensors/1/rank/tp", ["rank"])
    X("rank-dp-u64-overflow", "A dp coordinate of 2^64 is u64_overflow.", "u64_overflow", m(PI, {"/tensors/1/rank/dp": U64 + 1}), "/tensors/1/rank/dp", ["rank", "u64"])
    X("nbytes-zero", "nbytes 0 fails INT(nbytes, 1).", "below_minimum", m(PI, {"/tensors/5/nbytes": 0}), "/tensors/5/nbytes", ["fragment"])
    X("local-shape-zero", "A zero extent in local_shape fails INTS(local_shape, 1).", "below_minimum", m(PI, {"/tensors/2/local_shape": [4, 0]}), "/tensors/2/local_shape", ["fragment"])
    X("model-id-missing", "A placement inventory without model_id lacks a required member.", "missing_field", m(PI, {"/model_id": DEL}), "")
    X("order-records-before-model-id", "model_id is read only after every record.", "below_minimum",
      m(PI, {"/model_id": DEL, "/tensors/5/nbytes": 0}), "/tensors/5/nbytes", ["order"])
    X("revision-empty", "An empty revision fails STR(revision).", "empty_string", m(PI, {"/revision": ""}), "/revision")
    X("placement-id-empty", "An empty placement_id fails STR(placement_id).", "empty_string", m(PI, {"/placement_id": ""}), "/placement_id")
    X("placement-id-wrong", "A placement_id that is not the canonical id is rejected.", "placement_id_mismatch",
      m(PI, {"/placement_id": ID01["placement_id"]}))
    X("placement-id-mismatch-reference", "The 01 inventory with the id of placement 02 is rejected.", "placement_id_mismatch",
      m(RI01, {"/placement_id": ID02["placement_id"]}))
    X("duplicate-fragment-id", "Two records with one placement_fragment_id are rejected (F1).", "duplicate_fragment_id",
      m(PI, {"/tensors/1/placement_fragment_id": "qkv/tp0"}), None, ["fragment-set"])
    X("duplicate-logical-fragment", "Two records of one tensor, rank and box are rejected (F2).", "duplicate_logical_fragment",
      m(PI, {"/tensors/5/rank/tp": 0}), None, ["fragment-set"])
    X("fragment-overlap", "Overlapping boxes of one tensor on one rank are rejected.", "fragment_overlap",
      m(PI, {"/tensors/1/rank/tp": 0, "/tensors/1/global_offset": [3, 0]}), None, ["fragment-set", "overlap"])
    X("nbytes-mismatch", "nbytes that is not the box's byte size is rejected.", "nbytes_mismatch", m(PI, {"/tensors/0/nbytes": 16}), None, ["fragment-set"])
    X("non-shard-axis-shape", "A column split record narrower on axis 0 is rejected.", "non_shard_axis_shape",
      m(PI, {"/tensors/3/local_shape": [2, 4], "/tensors/3/nbytes": 16}), None, ["fragment-set"])
    X("replicated-fragment-incomplete", "A replicated record covering part of the tensor is rejected.", "replicated_fragment_incomplete",
      m(PI, {"/tensors/4/local_shape": [2], "/tensors/4/nbytes": 4}), None, ["fragment-set"])
    X("fragment-out-of-bounds", "A record box past the tensor end is rejected.", "fragment_out_of_bounds",
      m(PI, {"/tensors/1/global_offset": [5, 0]}), None, ["fragment-set"])
    X("non-finite-in-ignored-member", "NaN in an ignored member is still non_finite_number.", "non_finite_number",
      m(PI, {"/tensors/0/address": Raw("NaN")}), None, ["reader"])
    X("duplicate-key-in-ignored-member", "A duplicate key inside an ignored member is still duplicate_key.", "duplicate_key",
      m(PI, {"/tensors/0/physical": Pairs(("address", 1), ("address", 1))}), None, ["reader"])
    X("duplicate-key-in-record", "A repeated key inside a record is duplicate_key.", "duplicate_key",
      m(PI, {"/tensors/2": dup(PI["tensors"][2], "nbytes")}), None, ["reader"])
    X("not-an-object", "A placement inventory that is a string is not an object.", "not_an_object", '"inventory"', "")


# ----------------------------------------------------------------------------------------
# binding_inventory/ : binding.from_inventory (§10.4, §8.6)

def cases_binding_inventory():
    g = "binding_inventory/"
    op = "binding.from_inventory"

    def P(name, desc, doc, tags=(), **kw):
        ok(g + name, op, desc, tags, document=doc, **kw)

    def X(name, desc, code, doc, path=None, tags=(), **kw):
        bad(g + name, op, desc, code, path, tags, document=doc, **kw)

    def R(i, **changes):
        return {f"/fragments/{i}/{k}": v for k, v in changes.items()}

    P("fragments-reordered", "Binding fragments are emitted sorted by placement_fragment_id whatever the record order.",
      m(BI01, {"/fragments": BI01["fragments"][::-1]}), ["order"])
    P("option-view", "address_semantics 'view' is accepted.", BI01, address_semantics="view", tags=["view"])
    P("lease-generation-absent", "lease_generation is optional in binding records.", m(BI01, R(0, lease_generation=DEL) | R(1, lease_generation=None)), ["lease"])
    P("offsets-zero-without-view", "storage_offset and byte_offset of 0 need no view semantics.", m(BI01, R(0, storage_offset=0, byte_offset=0)), ["view"])
    P("offsets-with-view", "Non-zero offsets are accepted under 'view', with no alignment rule (byte_offset 3).",
      m(BI01, R(0, storage_offset=5, byte_offset=3)), ["view"], address_semantics="view")
    P("unknown-members-ignored", "Unknown members of the inventory and its records are ignored.",
      m(BI01, {"/note": [1, 2], "/fragments/2/stride": "ignored"}))
    P("overlapping-addresses-not-checked", "A binding manifest does not check address overlap (§2.8); bind does.",
      m(BI01, R(2, address=BI01["fragments"][0]["address"])), ["address"])
    P("placement-id-format-not-checked", "A binding's placement_id is any non-empty string (§2.8).", m(BI01, {"/placement_id": "my-placement"}))
    P("address-top-of-range", "address 2^64-33 with nbytes 32 is accepted.", m(BI01, R(3, address=U64 - 32, nbytes=32)), ["u64", "address"])
    P("no-fragments", "A binding inventory with no fragments is valid.", m(BI01, {"/fragments": []}))
    P("generation-u64-max", "generation 2^64-1 is accepted; records without lease_generation follow it.",
      m(BI01, {"/generation": U64, "/fragments": [m(f, {"/lease_generation": DEL}) for f in BI01["fragments"]]}), ["u64"])

    for name, val in (("option-empty", ""), ("option-uppercase", "VIEW")):
        X(name, f"address_semantics {val!r} is not exactly 'view'.", "address_semantics_invalid", BI01, address_semantics=val, tags=["view"])
    X("order-option-before-generation", "The option is checked before generation is read.", "address_semantics_invalid",
      m(BI01, {"/generation": DEL}), address_semantics="View", tags=["order"])
    X("generation-missing", "A binding inventory without generation lacks a required member.", "missing_field", m(BI01, {"/generation": DEL}), "")
    X("generation-negative", "A negative generation fails INT(generation, 0).", "below_minimum", m(BI01, {"/generation": -1}), "/generation")
    X("generation-float", "A generation written 3.0 fails INT.", "not_an_integer", m(BI01, {"/generation": Raw("3.0")}), "/generation")
    X("order-generation-before-other-members", "generation is read and checked before the other members are read.", "not_an_integer",
      m(BI01, {"/generation": "3", "/model_id": DEL}), "/generation", ["order"])
    for key in ("model_id", "placement_digest", "lease_id", "fragments"):
        X(f"{key.replace('_', '-')}-missing", f"A binding inventory without {key} lacks a required member.", "missing_field", m(BI01, {f"/{key}": DEL}), "")
    X("fragments-object", "fragments that is an object fails SEQ(runtime binding fragments).", "not_a_sequence", m(BI01, {"/fragments": {}}), "/fragments")
    X("record-not-an-object", "A record that is a number reads as an empty object: missing_field.", "missing_field", m(BI01, {"/fragments/1": 0}), "/fragments/1", ["structure"])
    for key in ("is_contiguous", "placement_fragment_id", "fragment_id", "device", "nbytes"):
        X(f"record-missing-{key.replace('_', '-')}", f"A record without {key} lacks a required member.", "missing_field",
          m(BI01, {f"/fragments/2/{key}": DEL}), "/fragments/2", ["structure"])
    X("is-contiguous-false", "is_contiguous false is rejected.", "not_contiguous", m(BI01, R(1, is_contiguous=False)), "/fragments/1/is_contiguous", ["view"])
    X("is-contiguous-string", "is_contiguous \"true\" is not the literal true.", "not_contiguous", m(BI01, R(0, is_contiguous="true")), "/fragments/0/is_contiguous", ["view"])
    X("lease-generation-mismatch", "A record lease_generation that differs from generation is rejected.", "lease_generation_mismatch",
      m(BI01, R(2, lease_generation=2)), "/fragments/2/lease_generation", ["lease"])
    X("lease-generation-negative", "A negative record lease_generation fails INT.", "below_minimum", m(BI01, R(0, lease_generation=-1)), "/fragments/0/lease_generation", ["lease"])
    X("storage-offset-without-view", "A non-zero storage_offset without 'view' is rejected.", "offsets_require_view_semantics", m(BI01, R(0, storage_offset=8)), None, ["view"])
    X("byte-offset-without-view", "A non-zero byte_offset without 'view' is rejected.", "offsets_require_view_semantics", m(BI01, R(3, byte_offset=2, storage_offset=0)), None, ["view"])
    X("storage-offset-negative", "A negative storage_offset fails INT.", "below_minimum", m(BI01, R(0, storage_offset=-1)), "/fragments/0/storage_offset", ["view"])
    X("byte-offset-string", "A string byte_offset fails INT.", "not_an_integer", m(BI01, R(0, byte_offset="0")), "/fragments/0/byte_offset", ["view"])
    X("order-contiguous-before-lease", "is_contiguous is checked before lease_generation.", "not_contiguous",
      m(BI01, R(0, is_contiguous=False, lease_generation=9)), "/fragments/0/is_contiguous", ["order"])
    X("order-lease-before-offsets", "lease_generation is checked before the offsets.", "lease_generation_mismatch",
      m(BI01, R(0, lease_generation=9, storage_offset=8)), "/fragments/0/lease_generation", ["order"])
    X("order-offsets-before-fragment-members", "The offsets are checked before placement_fragment_id ... device are read.", "offsets_require_view_semantics",
      m(BI01, R(0, storage_offset=8, device=DEL)), None, ["order"])
    for name, changes, code, path in (
        ("placement-fragment-id-empty", R(0, placement_fragment_id=""), "empty_string", "/fragments/0/placement_fragment_id"),
        ("fragment-id-null", R(1, fragment_id=None), "empty_string", "/fragments/1/fragment_id"),
        ("worker-id-empty", R(1, worker_id=""), "empty_string", "/fragments/1/worker_id"),
        ("endpoint-number", R(1, endpoint=17000), "empty_string", "/fragments/1/endpoint"),
        ("address-zero", R(2, address=0), "below_minimum", "/fragments/2/address"),
        ("address-float", R(2, address=Raw("4096.0")), "not_an_integer", "/fragments/2/address"),
        ("nbytes-zero", R(2, nbytes=0), "below_minimum", "/fragments/2/nbytes"),
        ("nbytes-u64-overflow", R(2, nbytes=U64 + 1), "u64_overflow", "/fragments/2/nbytes"),
    ):
        X(name, f"A record with {name.replace('-', ' ')} fails its RuntimeBindingFragment check.", code, m(BI01, changes), path, ["fragment"])
    X("address-range-overflow", "address 2^64-32 with nbytes 32 has an unrepresentable end.", "address_range_overflow",
      m(BI01, R(3, address=U64 - 31, nbytes=32)), None, ["u64", "address"])
    X("order-device-before-address", "STR(device) runs before the address checks.", "empty_string",
      m(BI01, R(0, device="", address=0)), "/fragments/0/device", ["order"])
    X("order-records-before-manifest-strings", "Records are checked before the manifest's own strings (construction, step 5).", "below_minimum",
      m(BI01, {"/model_id": ""} | R(3, address=0)), "/fragments/3/address", ["order"])
    for name, key, val in (("model-id-empty", "model_id", ""), ("revision-null", "revision", None), ("placement-id-empty", "placement_id", ""),
                           ("instance-id-empty", "instance_id", ""), ("lease-id-empty", "lease_id", ""), ("placement-digest-empty", "placement_digest", "")):
        X(name, f"{key} {render(val)} fails STR({key}).", "empty_string", m(BI01, {f"/{key}": val}), f"/{key}")
    X("order-lease-id-before-digest", "STR(lease_id) runs before the placement_digest checks.", "empty_string",
      m(BI01, {"/lease_id": "", "/placement_digest": "XYZ"}), "/lease_id", ["order"])
    d = BI01["placement_digest"]
    for name, val, what in (("digest-uppercase", d.upper(), "uppercase hex"), ("digest-prefixed", "sha256:" + d, "a sha256: prefix"),
                            ("digest-63-chars", d[:-1], "63 characters"), ("digest-65-chars", d + "0", "65 characters"),
                            ("digest-non-hex", "g" + d[1:], "a non-hex character"), ("digest-placement-id", ID01["placement_id"], "the placement_id")):
        X(name, f"A placement_digest with {what} is not a bare lowercase SHA-256 digest.", "digest_format", m(BI01, {"/placement_digest": val}), None, ["digest"])
    X("duplicate-binding-fragment", "Two records with one placement_fragment_id are rejected.", "duplicate_binding_fragment",
      m(BI01, R(1, placement_fragment_id="gate_up_proj/tp0")))
    X("duplicate-runtime-fragment-id", "Two records with one runtime fragment_id are rejected.", "duplicate_runtime_fragment_id",
      m(BI01, R(3, fragment_id="rt/worker-tp0/gate_up")))
    X("order-duplicate-binding-before-runtime-id", "duplicate_binding_fragment (step 6) wins over a duplicate fragment_id (step 7).", "duplicate_binding_fragment",
      m(BI01, {"/fragments/4": BI01["fragments"][0]}), None, ["order"])
    X("order-digest-format-before-duplicates", "The placement_digest format check (step 4) runs before the duplicate checks (steps 6, 7).", "digest_format",
      m(BI01, {"/placement_digest": d.upper(), "/fragments/4": BI01["fragments"][0]}), None, ["order"])
