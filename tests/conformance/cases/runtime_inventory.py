"""runtime_inventory/ : runtime.from_inventory (§10.3, §8.4, §8.5)."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry


# ----------------------------------------------------------------------------------------
# runtime_inventory/ : runtime.from_inventory (§10.2, §10.3, §8.4, §8.5)

def cases_runtime_inventory():
    g = "runtime_inventory/"
    op = "runtime.from_inventory"
    A0 = RI01["tensors"][0]["address"]

    def P(name, desc, doc, tags=(), **kw):
        ok(g + name, op, desc, tags, document=doc, **kw)

    def X(name, desc, code, doc, path=None, tags=(), **kw):
        bad(g + name, op, desc, code, path, tags, document=doc, **kw)

    def R(i, **changes):  # a change set on record i of RI01
        return {f"/tensors/{i}/{k}": v for k, v in changes.items()}

    # -- accepted
    P("option-null", "address_semantics null means not given.", RI01, address_semantics=None)
    P("option-view-without-offsets", "address_semantics 'view' with zero offsets is accepted.", RI01, address_semantics="view")
    P("view-with-offsets", "Non-zero storage_offset and item-aligned byte_offset are accepted under 'view'; the address is not adjusted.",
      m(RI01, R(0, storage_offset=64, byte_offset=4)), address_semantics="view", tags=["view"])
    P("view-storage-offset-any-value", "storage_offset has no alignment rule (3 elements under 'view').",
      m(RI01, R(1, storage_offset=3)), address_semantics="view", tags=["view"])
    P("records-reordered", "Runtime fragments keep record order while tensors are emitted sorted by tensor_id.",
      m(RI01, {"/tensors": RI01["tensors"][::-1]}), ["order"])
    P("descriptor-spellings-merged", "partition_dim 0 on one record and shard_dims [0] on another are one canonical descriptor (§10.3 step 4.2).",
      m(RI01, R(2, partition_dim=None, shard_dims=[0])), ["canonical"])
    P("optional-members-absent", "shard_dims, layer_id, expert_id, aliases, placement_fragment_id, lease_id and placement_id may be absent.",
      RINV([REC("rt/a", "w", [4, 8], [0, 0], [2, 8], pd=0), REC("rt/b", "w", [4, 8], [2, 0], [2, 8], pd=0, address=8192)], lease=DEL))
    P("optional-members-null", "Optional members given as null are not set.",
      RINV([REC("rt/a", "w", [4], [0], [4], sd=None, layer=None, expert=None, aliases=None, pfid=None)], lease=None, pid=None))
    P("unknown-members-ignored", "Unknown members at the top, record and rank level are ignored.",
      m(RI01, {"/framework": {"name": "x"}, "/tensors/0/device_index": 0, "/tensors/0/rank/world_size": 2}))
    P("placement-id-not-checked", "A runtime inventory's placement_id is kept as given; only a projection checks it (§8.4).",
      m(RI01, {"/placement_id": "not-the-canonical-id"}))
    P("empty-inventory", "An inventory with no records gives an empty runtime manifest with the given generation.", RINV([], gen=9))
    P("extent-one-axis-any-stride", "An axis of extent 1 accepts any stride (§10.3 step 4.3.5).",
      RINV([REC("rt/a", "w", [4, 8], [0, 0], [1, 8], pd=0, stride=[12345, 1]),
            REC("rt/b", "w", [4, 8], [1, 0], [1, 8], pd=0, stride=[0, 1], address=8192)]), ["stride"])
    P("extent-one-last-axis-any-stride", "A last axis of extent 1 accepts any stride while axis 0 must be 1.",
      RINV([REC("rt/a", "w", [8, 4], [0, 0], [8, 1], pd=1, stride=[1, 7])]), ["stride"])
    P("address-top-of-range", "address 2^64-33 with nbytes 32 ends exactly at 2^64-1 and is accepted (§2.4 step 4).",
      RINV([REC("rt/top", "w", [16], [0], [16], address=U64 - 32)]), ["u64", "address"])
    P("address-ranges-touching", "Byte ranges that only touch on one worker and device do not overlap.",
      RINV([REC("rt/a", "w", [8], [0], [8], address=4096), REC("rt/b", "v", [8], [0], [8], address=4096 + 16)]), ["address"])
    P("same-address-different-worker", "The same address on two workers with the same device name is in two address spaces.",
      RINV([REC("rt/a", "w", [8], [0], [8], worker="w-0"), REC("rt/b", "w", [8], [0], [8], worker="w-1", rank=RK(tp=1))]), ["address"])
    P("same-address-different-device", "The same address on two devices of one worker is in two address spaces.",
      RINV([REC("rt/a", "w", [8], [0], [8], device="cuda:0"), REC("rt/b", "w", [8], [0], [8], device="cuda:1", rank=RK(tp=1))]), ["address"])
    P("tied-exact-alias-pair", "Tied embeddings sharing one address with equal declared aliases are the exempt alias pair (§8.5).", TIED, ["alias", "realistic"])
    P("tied-aliases-given-unsorted", "Alias lists are compared sorted, so [lm_head, embed] matches [embed, lm_head].",
      m(TIED, {"/tensors/1/aliases": [LMH, EMB]}), ["alias"])
    P("tied-alias-pair-different-ranks", "An exact alias pair need not share a rank.", m(TIED, {"/tensors/1/rank": RK(tp=1)}), ["alias"])
    P("tied-alias-names-free-form", "Alias names need not be tensor ids.", m(TIED, {"/tensors/0/aliases": ["tie:a", "tie:b"], "/tensors/1/aliases": ["tie:b", "tie:a"]}), ["alias"])
    P("tied-alias-equivalent-spellings", "Descriptors compared by the alias rule are canonical, so partition_dim 0 and shard_dims [0] match.",
      m(TIED, {"/tensors/1/partition_dim": None, "/tensors/1/shard_dims": [0]}), ["alias", "canonical"])
    P("tied-three-way", "Three fragments at one address that pairwise form exact alias pairs are accepted.",
      m(TIED, {"/tensors/0/aliases": ["a", "b", "c"], "/tensors/1/aliases": ["a", "b", "c"],
               "/tensors/3": REC("rt/out", "output.weight", [32, 8], [0, 0], [16, 8], pd=0, address=65536, aliases=["c", "b", "a"])}), ["alias"])
    P("u64-max-rank-coordinates", "Rank coordinates of 2^64-1 are accepted.", m(RI01, R(0, rank=RK(U64, U64, U64, U64))), ["u64"])
    P("moe-experts-over-pp-and-ep", "The MoE inventory with EP-owned experts over two PP stages is accepted.", RI02, ["realistic"])

    # -- option (§10.2)
    for name, val in (("option-empty", ""), ("option-uppercase", "VIEW"), ("option-padded", " view"), ("option-plural", "views")):
        X(name, f"address_semantics {val!r} is not exactly 'view'.", "address_semantics_invalid", RI01, address_semantics=val, tags=["view"])
    X("order-option-before-members", "The option is checked before any member is read (generation missing).", "address_semantics_invalid",
      m(RI01, {"/generation": DEL}), address_semantics="VIEW", tags=["order"])

    # -- top level
    X("generation-missing", "A runtime inventory without generation lacks a required member.", "missing_field", m(RI01, {"/generation": DEL}), "")
    X("generation-negative", "A negative generation fails INT(generation, 0).", "below_minimum", m(RI01, {"/generation": -1}), "/generation")
    X("generation-string", "A string generation fails INT(generation, 0).", "not_an_integer", m(RI01, {"/generation": "3"}), "/generation")
    X("generation-null", "A required member given as null is passed to its check: null generation is not an integer.", "not_an_integer", m(RI01, {"/generation": None}), "/generation")
    X("generation-float", "A generation written 3.0 is not an integer.", "not_an_integer", m(RI01, {"/generation": Raw("3.0")}), "/generation")
    X("order-generation-before-tensors", "generation is read and checked before tensors is read.", "below_minimum",
      m(RI01, {"/generation": -1, "/tensors": DEL}), "/generation", ["order"])
    X("tensors-missing", "A runtime inventory without tensors lacks a required member.", "missing_field", m(RI01, {"/tensors": DEL}), "")
    X("tensors-object", "tensors that is an object fails SEQ(runtime inventory tensors).", "not_a_sequence", m(RI01, {"/tensors": {}}), "/tensors")
    X("tensors-null", "tensors given as null fails SEQ(runtime inventory tensors).", "not_a_sequence", m(RI01, {"/tensors": None}), "/tensors")
    X("record-not-an-object", "A record that is a number reads as an empty object: missing_field.", "missing_field", m(RI01, {"/tensors/1": 5}), "/tensors/1", ["structure"])
    X("record-null", "A record that is null reads as an empty object: missing_field.", "missing_field", m(RI01, {"/tensors/0": None}), "/tensors/0", ["structure"])
    for name, key in (("record-missing-tensor-id", "tensor_id"), ("record-missing-partition-dim", "partition_dim"),
                      ("record-missing-layout-fingerprint", "layout_fingerprint"), ("record-missing-is-contiguous", "is_contiguous"),
                      ("record-missing-stride", "stride"), ("record-missing-byte-offset", "byte_offset"),
                      ("record-missing-lease-generation", "lease_generation"), ("record-missing-rank", "rank"),
                      ("record-missing-fragment-id", "fragment_id"), ("record-missing-address", "address"),
                      ("record-missing-endpoint", "endpoint"), ("record-missing-global-offset", "global_offset")):
        X(name, f"A record without {key} lacks a required member.", "missing_field", m(RI01, {f"/tensors/2/{key}": DEL}), "/tensors/2", ["structure"])
    X("rank-missing-pp", "A rank without pp lacks a required member; the rank is the object that lacks it.", "missing_field",
      m(RI01, {"/tensors/0/rank/pp": DEL}), "/tensors/0/rank", ["structure"])
    X("rank-not-an-object", "A rank that is a number reads as an empty object: missing_field at the rank.", "missing_field",
      m(RI01, {"/tensors/3/rank": 7}), "/tensors/3/rank", ["structure"])
    X("order-descriptor-reads-before-checks", "All descriptor members are read before the descriptor checks run.", "missing_field",
      m(RI01, R(0, layout_fingerprint=DEL, global_shape=[])), "/tensors/0", ["order"])
    X("order-fragment-reads-before-rank-members", "fragment_id ... device are read before the rank's members.", "missing_field",
      m(RI01, R(0, device=DEL, rank={})), "/tensors/0", ["order"])
    X("order-rank-read-before-lease-check", "rank is read (required) before lease_generation is compared.", "missing_field",
      m(RI01, R(1, rank=DEL, lease_generation=4)), "/tensors/1", ["order"])

    # -- descriptor (§2.2 via §10.3 step 4.1) and merge (step 4.2)
    for name, changes, code, path in (
        ("global-shape-empty", R(0, global_shape=[]), "empty_shape", "/tensors/0/global_shape"),
        ("tensor-id-null", R(0, tensor_id=None), "empty_string", "/tensors/0/tensor_id"),
        ("itemsize-null", R(1, itemsize=None), "not_an_integer", "/tensors/1/itemsize"),
        ("partition-dim-out-of-range", R(0, partition_dim=2), "partition_dim_out_of_range", "/tensors/0/partition_dim"),
        ("shard-dims-duplicate", R(0, partition_dim=None, shard_dims=[0, 0]), "shard_dims_duplicate", "/tensors/0/shard_dims"),
        ("shard-dims-unsorted", R(0, partition_dim=None, shard_dims=[1, 0]), "shard_dims_unsorted", "/tensors/0/shard_dims"),
        ("shard-dims-out-of-range", R(1, shard_dims=[1]), "shard_dims_out_of_range", "/tensors/1/shard_dims"),
        ("partition-dim-conflict", R(0, shard_dims=[1]), "partition_dim_conflict", "/tensors/0/shard_dims"),
        ("layer-id-negative", R(0, layer_id=-1), "below_minimum", "/tensors/0/layer_id"),
        ("expert-id-string", R(0, expert_id="3"), "not_an_integer", "/tensors/0/expert_id"),
        ("layout-fingerprint-empty", R(3, layout_fingerprint=""), "empty_string", "/tensors/3/layout_fingerprint"),
    ):
        X(name, f"A record whose descriptor has {name.replace('-', ' ')} fails the TensorDescriptor checks.", code, m(RI01, changes), path, ["descriptor"])
    X("descriptor-mismatch-dtype", "A second record of one tensor with another dtype is a descriptor mismatch.", "descriptor_mismatch",
      m(RI01, R(2, dtype="float16")), "/tensors/2", ["descriptor"])
    X("descriptor-mismatch-layer-id", "A second record of one tensor with another layer_id is a descriptor mismatch.", "descriptor_mismatch",
      m(RI01, R(3, layer_id=1)), "/tensors/3", ["descriptor"])
    X("descriptor-mismatch-split-dim", "partition_dim 0 and shard_dims [1] are different canonical descriptors.", "descriptor_mismatch",
      m(RI01, R(2, partition_dim=None, shard_dims=[1])), "/tensors/2", ["descriptor"])
    X("descriptor-mismatch-layer-id-absent", "layer_id absent (null) and layer_id 0 are different descriptors.", "descriptor_mismatch",
      m(RI01, R(3, layer_id=DEL)), "/tensors/3", ["descriptor"])
    X("descriptor-mismatch-moe-expert-id", "An MoE expert record that changes expert_id of an earlier record is a mismatch.", "descriptor_mismatch",
      m(RI02, R(5, expert_id=1)), "/tensors/5", ["descriptor", "realistic"])
    X("order-descriptor-checks-before-merge", "The descriptor checks run before the comparison with earlier records.", "below_minimum",
      m(RI01, R(2, itemsize=0)), "/tensors/2/itemsize", ["order"])
    X("order-descriptor-mismatch-before-view", "descriptor_mismatch (step 4.2) wins over a non-contiguous view (step 4.3).", "descriptor_mismatch",
      m(RI01, R(2, dtype="float16", is_contiguous=False)), "/tensors/2", ["order"])

    # -- view (§10.3 step 4.3)
    for name, val in (("is-contiguous-false", False), ("is-contiguous-one", 1), ("is-contiguous-string", "true"), ("is-contiguous-null", None)):
        X(name, f"is_contiguous {render(val)} is not the literal true.", "not_contiguous", m(RI01, R(1, is_contiguous=val)), "/tensors/1/is_contiguous", ["view"])
    X("order-contiguous-before-local-shape", "is_contiguous is checked before local_shape is read.", "not_contiguous",
      m(RI01, R(0, is_contiguous=False, local_shape=DEL)), "/tensors/0/is_contiguous", ["order"])
    X("local-shape-zero", "A zero extent in local_shape fails INTS(local_shape, 1).", "below_minimum", m(RI01, R(0, local_shape=[0, 8])), "/tensors/0/local_shape", ["view"])
    X("local-shape-not-array", "A local_shape that is a string fails INTS.", "not_a_sequence", m(RI01, R(0, local_shape="8x8")), "/tensors/0/local_shape", ["view"])
    X("stride-not-array", "A stride that is a string fails INTS(stride, 0).", "not_a_sequence", m(RI01, R(0, stride="8,1")), "/tensors/0/stride", ["stride"])
    X("stride-negative", "A negative stride fails INTS(stride, 0).", "below_minimum", m(RI01, R(0, stride=[8, -1])), "/tensors/0/stride", ["stride"])
    X("stride-rank-mismatch", "A 1-element stride for a 2-D view is a stride rank mismatch.", "stride_rank_mismatch", m(RI01, R(0, stride=[8])), "/tensors/0/stride", ["stride"])
    X("stride-rank-mismatch-longer", "A 3-element stride for a 2-D view is a stride rank mismatch.", "stride_rank_mismatch", m(RI01, R(2, stride=[64, 8, 1])), "/tensors/2/stride", ["stride"])
    X("stride-column-major", "A column-major stride [1, 8] is not the canonical row-major stride.", "non_canonical_stride", m(RI01, R(0, stride=[1, 8])), "/tensors/0/stride", ["stride"])
    X("stride-padded-rows", "A padded row stride [16, 1] is not canonical.", "non_canonical_stride", m(RI01, R(2, stride=[16, 1])), "/tensors/2/stride", ["stride"])
    X("stride-zero-on-replicated", "A zero stride on an axis of extent 8 is not canonical.", "non_canonical_stride", m(RI01, R(1, stride=[0])), "/tensors/1/stride", ["stride"])
    X("stride-canonical-overflow", "A canonical stride above 2^64-1 equals no u64 value, so the stride fails (§10.3 step 4.3.5).", "non_canonical_stride",
      RINV([REC("rt/huge", "huge", [2, 2**32, 2**32], [0, 0, 0], [2, 2**32, 2**32], itemsize=1, stride=[0, 2**32, 1], nbytes=1)]), "/tensors/0/stride", ["stride", "u64"])
    X("stride-overflow-on-extent-one-axis", "An unrepresentable canonical stride on an extent-1 axis passes, so the record fails later at nbytes (§8.2 F8).", "nbytes_mismatch",
      RINV([REC("rt/huge", "huge", [1, 2**32, 2**32], [0, 0, 0], [1, 2**32, 2**32], itemsize=1, stride=[7, 2**32, 1], nbytes=U64 - 4096)]), None, ["stride", "u64", "order"])
    X("order-stride-rank-before-canonical", "The stride rank is checked before the stride values.", "stride_rank_mismatch",
      m(RI01, R(0, stride=[1])), "/tensors/0/stride", ["order"])
    X("storage-offset-negative", "A negative storage_offset fails INT(storage_offset, 0).", "below_minimum", m(RI01, R(0, storage_offset=-1)), "/tensors/0/storage_offset", ["view"])
    X("byte-offset-float", "A byte_offset of 1.5 fails INT(byte_offset, 0).", "not_an_integer", m(RI01, R(0, byte_offset=Raw("1.5"))), "/tensors/0/byte_offset", ["view"])
    X("byte-offset-u64-overflow", "A byte_offset of 2^64 fails with u64_overflow.", "u64_overflow", m(RI01, R(0, byte_offset=U64 + 1)), "/tensors/0/byte_offset", ["view", "u64"])
    X("byte-offset-unaligned", "A byte_offset of 3 with itemsize 2 is not item-aligned, even under 'view'.", "byte_offset_unaligned",
      m(RI01, R(0, byte_offset=3)), "/tensors/0/byte_offset", ["view"], address_semantics="view")
    X("order-unaligned-before-view-requirement", "byte_offset alignment (step 4.3.7) is checked before the view requirement (4.3.8).", "byte_offset_unaligned",
      m(RI01, R(1, byte_offset=1)), "/tensors/1/byte_offset", ["order"])
    X("storage-offset-without-view", "A non-zero storage_offset without address_semantics 'view' is rejected.", "offsets_require_view_semantics",
      m(RI01, R(0, storage_offset=64)), None, ["view"])
    X("byte-offset-without-view", "A non-zero aligned byte_offset without 'view' is rejected.", "offsets_require_view_semantics",
      m(RI01, R(3, byte_offset=2)), None, ["view"], address_semantics=None)
    X("order-offset-reads-before-checks", "storage_offset and byte_offset are both read before either is checked.", "missing_field",
      m(RI01, R(0, storage_offset=-1, byte_offset=DEL)), "/tensors/0", ["order"])
    X("order-storage-offset-before-byte-offset", "INT(storage_offset) runs before INT(byte_offset).", "not_an_integer",
      m(RI01, R(0, storage_offset="0", byte_offset=-1)), "/tensors/0/storage_offset", ["order"])
    X("order-stride-before-offsets", "The stride check runs before the offsets are checked.", "non_canonical_stride",
      m(RI01, R(0, stride=[1, 8], storage_offset=-1)), "/tensors/0/stride", ["order"])

    # -- lease (§10.3 step 4.4)
    X("lease-generation-mismatch", "A record whose lease_generation differs from generation is rejected.", "lease_generation_mismatch",
      m(RI01, R(1, lease_generation=4)), "/tensors/1/lease_generation", ["lease"])
    X("lease-generation-u64-overflow", "lease_generation 2^64 with generation 3 is u64_overflow, not a mismatch (§16 D1).", "u64_overflow",
      m(RI01, R(0, lease_generation=U64 + 1)), "/tensors/0/lease_generation", ["lease", "u64"])
    X("lease-generation-negative", "A negative lease_generation fails INT(lease_generation, 0).", "below_minimum",
      m(RI01, R(2, lease_generation=-3)), "/tensors/2/lease_generation", ["lease"])
    X("order-view-before-lease", "The view checks run before the lease check.", "non_canonical_stride",
      m(RI01, R(0, stride=[16, 1], lease_generation=4)), "/tensors/0/stride", ["order"])
    X("order-lease-before-fragment-reads", "The lease check runs before fragment_id ... device are read.", "lease_generation_mismatch",
      m(RI01, R(0, lease_generation=2, address=DEL)), "/tensors/0/lease_generation", ["order"])

    # -- fragment (§10.3 steps 4.5, 4.6)
    for name, changes, code, path in (
        ("rank-dp-negative", R(0, rank=RK(dp=-1)), "below_minimum", "/tensors/0/rank/dp"),
        ("rank-ep-string", R(2, rank=m(RI01["tensors"][2]["rank"], {"/ep": "0"})), "not_an_integer", "/tensors/2/rank/ep"),
        ("rank-tp-u64-overflow", R(0, rank=RK(tp=U64 + 1)), "u64_overflow", "/tensors/0/rank/tp"),
        ("aliases-string", R(0, aliases="lm_head.weight"), "aliases_invalid", "/tensors/0/aliases"),
        ("aliases-object", R(0, aliases={"a": 1}), "aliases_invalid", "/tensors/0/aliases"),
        ("aliases-empty-name", R(0, aliases=[""]), "aliases_invalid", "/tensors/0/aliases"),
        ("aliases-duplicate", R(0, aliases=["x", "x"]), "aliases_duplicate", "/tensors/0/aliases"),
        ("global-offset-negative", R(0, global_offset=[0, -1]), "below_minimum", "/tensors/0/global_offset"),
        ("global-offset-null", R(0, global_offset=None), "not_a_sequence", "/tensors/0/global_offset"),
        ("fragment-id-empty", R(1, fragment_id=""), "empty_string", "/tensors/1/fragment_id"),
        ("worker-id-null", R(1, worker_id=None), "empty_string", "/tensors/1/worker_id"),
        ("endpoint-empty", R(1, endpoint=""), "empty_string", "/tensors/1/endpoint"),
        ("device-number", R(1, device=0), "empty_string", "/tensors/1/device"),
        ("address-zero", R(1, address=0), "below_minimum", "/tensors/1/address"),
        ("address-negative", R(1, address=-4096), "below_minimum", "/tensors/1/address"),
        ("address-hex-string", R(1, address="0x7f3a00000000"), "not_an_integer", "/tensors/1/address"),
        ("address-u64-overflow", R(1, address=U64 + 1), "u64_overflow", "/tensors/1/address"),
        ("nbytes-zero", R(1, nbytes=0), "below_minimum", "/tensors/1/nbytes"),
        ("placement-fragment-id-empty", R(0, placement_fragment_id=""), "empty_string", "/tensors/0/placement_fragment_id"),
        ("placement-fragment-id-number", R(0, placement_fragment_id=1), "empty_string", "/tensors/0/placement_fragment_id"),
    ):
        X(name, f"A record with {name.replace('-', ' ')} fails its RuntimeFragment or ParallelRank check.", code, m(RI01, changes), path, ["fragment"])
    X("address-range-overflow", "address 2^64-32 with nbytes 32 has an unrepresentable end (§2.4 step 4).", "address_range_overflow",
      RINV([REC("rt/top", "w", [16], [0], [16], address=U64 - 31)]), None, ["u64", "address"])
    X("address-range-overflow-u64-max-address", "address 2^64-1 with nbytes 1 has an unrepresentable end.", "address_range_overflow",
      RINV([REC("rt/top", "w", [1], [0], [1], itemsize=1, address=U64)]), None, ["u64", "address"])
    X("order-rank-checks-before-fragment-checks", "The ParallelRank checks (step 4.5) run before the RuntimeFragment checks (4.6).", "below_minimum",
      m(RI01, R(0, rank=RK(dp=-1), fragment_id="")), "/tensors/0/rank/dp", ["order"])
    X("order-aliases-read-before-fragment-checks", "aliases that is not an array is rejected when read (4.5), before STR(fragment_id) (4.6).", "aliases_invalid",
      m(RI01, R(0, aliases="x", fragment_id="")), "/tensors/0/aliases", ["order"])
    X("order-fragment-checks-before-alias-elements", "An empty alias name is found by ALIASES (4.6 step 7), after STR(fragment_id).", "empty_string",
      m(RI01, R(0, aliases=[""], fragment_id="")), "/tensors/0/fragment_id", ["order"])
    X("order-global-offset-before-fragment-id", "INTS(global_offset) runs before STR(fragment_id).", "below_minimum",
      m(RI01, R(0, global_offset=[-1, 0], fragment_id="")), "/tensors/0/global_offset", ["order"])
    X("order-fragment-id-before-worker-id", "STR runs on fragment_id before worker_id.", "empty_string",
      m(RI01, R(0, worker_id="", fragment_id="")), "/tensors/0/fragment_id", ["order"])
    X("order-device-before-address", "STR(device) runs before the address checks.", "empty_string",
      m(RI01, R(0, device="", address=0)), "/tensors/0/device", ["order"])
    X("order-address-before-nbytes", "INT(address) runs before INT(nbytes).", "below_minimum",
      m(RI01, R(0, address=0, nbytes=0)), "/tensors/0/address", ["order"])
    X("order-aliases-before-placement-fragment-id", "ALIASES runs before STR(placement_fragment_id).", "aliases_duplicate",
      m(RI01, R(0, aliases=["a", "a"], placement_fragment_id="")), "/tensors/0/aliases", ["order"])

    # -- top-level strings and construction (§10.3 step 5, §8.4)
    for name, key in (("model-id-missing", "model_id"), ("revision-missing", "revision"), ("instance-id-missing", "instance_id")):
        X(name, f"A runtime inventory without {key} lacks a required member.", "missing_field", m(RI01, {f"/{key}": DEL}), "")
    X("order-records-before-model-id", "model_id is read only after every record.", "below_minimum",
      m(RI01, {"/model_id": DEL, "/tensors/3/address": 0}), "/tensors/3/address", ["order"])
    for name, key, val in (("model-id-empty", "model_id", ""), ("revision-null", "revision", None), ("instance-id-empty", "instance_id", ""),
                           ("lease-id-empty", "lease_id", ""), ("placement-id-empty", "placement_id", ""), ("lease-id-number", "lease_id", 3)):
        X(name, f"{key} {render(val)} fails STR({key}).", "empty_string", m(RI01, {f"/{key}": val}), f"/{key}")
    X("order-model-id-before-instance-id", "STR(model_id) runs before STR(instance_id).", "empty_string",
      m(RI01, {"/model_id": "", "/instance_id": ""}), "/model_id", ["order"])
    X("order-lease-id-before-placement-id", "STR(lease_id) runs before STR(placement_id).", "empty_string",
      m(RI01, {"/placement_id": "", "/lease_id": ""}), "/lease_id", ["order"])
    X("order-strings-before-fragment-set", "The manifest strings are checked before the fragment-set rules.", "empty_string",
      m(RI01, {"/instance_id": "", "/tensors/2/fragment_id": RI01["tensors"][0]["fragment_id"]}), "/instance_id", ["order"])

    # -- fragment-set rules (§8.2) on runtime fragments (id = fragment_id)
    X("duplicate-fragment-id", "Two records with one runtime fragment_id are rejected (F1).", "duplicate_fragment_id",
      m(RI01, R(2, fragment_id=RI01["tensors"][0]["fragment_id"])), None, ["fragment-set"])
    X("duplicate-logical-fragment", "Two records of one tensor with the same rank and box are rejected (F2).", "duplicate_logical_fragment",
      m(RI01, R(3, rank=RK(tp=0))), None, ["fragment-set"])
    X("fragment-rank-mismatch", "A 2-element global_offset for a 1-D tensor is rejected (F4).", "fragment_rank_mismatch",
      m(RI01, R(1, global_offset=[0, 0])), None, ["fragment-set"])
    X("fragment-out-of-bounds", "A row split box past the end of the tensor is rejected (F5).", "fragment_out_of_bounds",
      m(RI01, R(2, global_offset=[12, 0])), None, ["fragment-set"])
    X("replicated-fragment-offset", "A replicated norm record with a non-zero offset is rejected (F6a).", "replicated_fragment_offset",
      m(RI01, R(1, global_offset=[4], local_shape=[4], stride=[1], nbytes=8)), None, ["fragment-set"])
    X("replicated-fragment-incomplete", "A replicated norm record covering half the tensor is rejected (F6b).", "replicated_fragment_incomplete",
      m(RI01, R(3, local_shape=[4], nbytes=8)), None, ["fragment-set"])
    X("non-shard-axis-offset", "A row split record with an offset on axis 1 is rejected (F7).", "non_shard_axis_offset",
      m(RI01, R(2, global_offset=[8, 4], local_shape=[8, 4], stride=[4, 1], nbytes=64)), None, ["fragment-set"])
    X("non-shard-axis-shape", "A row split record narrower than the tensor on axis 1 is rejected (F7).", "non_shard_axis_shape",
      m(RI01, R(0, local_shape=[8, 4], stride=[4, 1], nbytes=64)), None, ["fragment-set"])
    X("nbytes-mismatch", "A record whose nbytes is not the view's byte size is rejected (F8).", "nbytes_mismatch",
      m(RI01, R(0, nbytes=127)), None, ["fragment-set"])
    X("fragment-overlap", "Two row split boxes of one tensor on one rank that overlap are rejected (§8.3).", "fragment_overlap",
      m(RI01, R(2, rank=RK(tp=0), global_offset=[4, 0])), None, ["fragment-set", "overlap"])
    X("order-fragment-set-in-record-order", "Runtime fragments are checked in manifest (record) order: the first bad record wins.", "nbytes_mismatch",
      m(RI01, R(1, nbytes=17) | R(3, global_offset=[0, 0])), None, ["order"])

    # -- physical address rules (§8.5)
    X("address-overlap-same-device", "Two fragments on one worker and device with overlapping byte ranges are rejected.", "address_overlap",
      m(RI01, R(1, address=A0 + 64)), None, ["address"])
    X("address-overlap-nested", "A byte range nested inside another in one address space is rejected.", "address_overlap",
      RINV([REC("rt/a", "w", [64], [0], [64], address=4096), REC("rt/b", "v", [8], [0], [8], address=4096 + 32)]), None, ["address"])
    X("address-overlap-two-endpoints", "The endpoint is not part of the address space: two endpoints of one worker and device overlap.", "address_overlap",
      RINV([REC("rt/a", "w", [8], [0], [8], endpoint="10.0.0.1:17000"), REC("rt/b", "v", [8], [0], [8], endpoint="10.0.0.1:17001", address=4096 + 8)]), None, ["address"])
    X("address-overlap-moe-experts", "Two MoE expert weights on one worker placed at overlapping addresses are rejected.", "address_overlap",
      m(RI02, R(2, address=RI02["tensors"][1]["address"] + 64)), None, ["address", "realistic"])
    X("order-fragment-set-before-address", "The fragment-set rules run before the address rules.", "nbytes_mismatch",
      m(RI01, R(1, address=A0 + 64) | R(3, nbytes=15)), None, ["order"])
    for name, desc, changes in (
        ("alias-one-name", "A one-name alias list never qualifies as an exact declared alias pair.",
         {"/tensors/0/aliases": [EMB], "/tensors/1/aliases": [EMB]}),
        ("alias-one-side-only", "Aliases declared on only one of two fragments at one address do not qualify.", {"/tensors/1/aliases": DEL}),
        ("alias-different-lists", "Different alias lists do not qualify.", {"/tensors/1/aliases": [EMB, "output.weight"]}),
        ("alias-partial-overlap", "A partial overlap is rejected even with equal declared aliases.", {"/tensors/1/address": 65536 + 128}),
        ("alias-different-nbytes", "A nested range with equal aliases (different nbytes and shape) is rejected.",
         {"/tensors/1/local_shape": [8, 8], "/tensors/1/stride": [8, 1], "/tensors/1/nbytes": 128}),
        ("alias-different-dtype", "Different dtypes make the descriptors differ, so the pair does not qualify.", {"/tensors/1/dtype": "float16"}),
        ("alias-different-fingerprint", "Different layout fingerprints make the descriptors differ.", {"/tensors/1/layout_fingerprint": "other"}),
        ("alias-different-global-shape", "Different global shapes make the descriptors differ.", {"/tensors/1/global_shape": [48, 8]}),
        ("alias-different-layer-id", "Different layer_ids make the descriptors differ.", {"/tensors/1/layer_id": 1}),
        ("alias-different-box", "Different global offsets do not qualify as an exact pair.", {"/tensors/1/global_offset": [16, 0]}),
    ):
        X(name, desc, "address_overlap", m(TIED, changes), None, ["alias", "address"])
