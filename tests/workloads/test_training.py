"""One training step under ZeRO-3, FCDP and FCDP+PEFT: bytes per link class from the
simulated traffic, the step's time split, memory, and FCDP against ZeRO-3 on 2 x 4 GPUs."""

from fractions import Fraction

import pytest

from archmodel.models.training import shard_bytes
from archmodel.workloads.training import StepOptions, model_shape, step_layers

from .training_systems import SMALL, run_step

SHAPE = model_shape(layers=4, hidden=512, seq=256)


def buffers(p, options=StepOptions(schedule="zero3")):
    """Each layer's FP16 buffer padded to p shards, and each layer's trainable part so padded."""
    layers = step_layers(SHAPE, options)
    return ([p * shard_bytes(2 * layer.params, p) for layer in layers],
            [p * shard_bytes(2 * layer.trainable, p) if layer.trainable else 0 for layer in layers])


@pytest.mark.parametrize("nodes, gpus, algorithm", [(2, 4, "ring"), (4, 2, "ring"), (3, 3, "tree")])
def test_zero3_moves_3x_and_fcdp_2x_the_parameter_bytes_across_nodes(tmp_path, nodes, gpus, algorithm):
    how = f', algorithm = "{algorithm}", chunks = 2'
    zero3, _ = run_step(tmp_path, SMALL + ', schedule = "zero3"' + how, nodes=nodes, gpus=gpus)
    fcdp, _ = run_step(tmp_path, SMALL + ', schedule = "fcdp"' + how, nodes=nodes, gpus=gpus)
    psi = sum(buffers(nodes * gpus)[0])
    # Per collective each node sends (n - 1)/n of the buffer through its NIC: (n - 1) buffers
    # on the NIC-to-NIC links in all. ZeRO-3 runs three per layer, FCDP two. A binary tree's
    # all-gather moves what the ring's does (each shard reaches every other node once); its
    # reduce-scatter sends every shard's partial sum up and the two leaves' sums back down:
    # 3 x 2 + 2 shards per rail where the ring sends 3 x 2.
    tree = 1 if algorithm == "ring" else Fraction(3 * 2 + 2, 3 * 2)  # the tree case: 3 nodes of 3 GPUs
    gather = (nodes - 1) * psi
    assert zero3.link_bytes["inter-node"] == 2 * gather + gather * tree
    assert fcdp.link_bytes["inter-node"] == gather + gather * tree
    # Inside every node each collective moves (g - 1)/g of the buffer per GPU (the tree's
    # reduce-scatter more, as across nodes); FCDP's backward gathers inside the node too.
    inside = nodes * (gpus - 1) * psi
    for result in (zero3, fcdp):
        assert result.link_bytes["NIC PCIe"] == 2 * result.link_bytes["inter-node"]  # GPU -> NIC -> GPU
        assert result.link_bytes["intra-node"] == 2 * inside + inside * tree
    assert zero3.link_bytes["host PCIe"] == 0
    # FCDP writes each node's copy of every layer to its host in forward and reads it back.
    assert fcdp.link_bytes["host PCIe"] == 2 * nodes * psi


def test_fcdp_with_peft_moves_only_the_adapters_across_nodes(tmp_path):
    fraction = 0.05
    peft, _ = run_step(tmp_path, SMALL + f', schedule = "fcdp_peft", trainable_fraction = {fraction}')
    zero3, _ = run_step(tmp_path, SMALL + ', schedule = "zero3"')
    options = StepOptions(schedule="fcdp_peft", trainable_fraction=fraction)
    full, trainable = buffers(8, options)
    # One all-gather of the adapters in forward and one reduce-scatter of their gradients.
    assert peft.link_bytes["inter-node"] == 2 * sum(trainable)
    # ZeRO-3's gradient traffic is a third of its inter-node bytes: PEFT moves about 2f of it
    # (the adapters' gather as well as their gradients), nothing for the frozen weights. The
    # adapters are a fraction of every block; the embedding is frozen, so f is of the blocks.
    layers = step_layers(SHAPE, options)
    f = sum(layer.trainable for layer in layers) / sum(layer.params for layer in layers)
    gradients = zero3.link_bytes["inter-node"] / 3
    assert peft.link_bytes["inter-node"] / gradients == pytest.approx(2 * f, rel=0.01)


def test_step_time_splits_into_compute_exposed_and_overlap(tmp_path):
    for schedule in ("zero3", "fcdp", "fcdp_peft"):
        result, top = run_step(tmp_path, SMALL + f', schedule = "{schedule}"')
        assert result.finished
        assert result.compute_ps + result.exposed_ps == result.step_ps
        assert 0 < result.overlap_ps <= min(result.compute_ps, result.comm_ps)
        gpus = [c for c in top.walk() if type(c).__name__ == "Gpu"]
        assert {g.compute_ps() for g in gpus} == {result.compute_ps}  # the same work on every GPU
        assert result.step_ps == max(g.step_ps() for g in gpus)


def test_compute_time_is_the_flops_over_the_sustained_rate(tmp_path):
    result, _ = run_step(tmp_path, SMALL + ', schedule = "zero3", checkpointing = false')
    b, s, h, layers, vocab = 1, 256, 512, 4, 50257
    block = 24 * b * s * h * h + 4 * b * s * s * h
    head = 2 * b * s * h * vocab
    # Forward, then backward at twice the forward; each task lasts round(FLOPs / TFLOP/s) ps
    # and ends at the GPU's next 1 ns clock edge.
    tasks = [block] * layers + [head] + [2 * head] + [2 * block] * layers
    assert result.compute_ps == sum(-(-round(f / 150.0) // 1000) * 1000 for f in tasks)


def test_peak_memory_stays_within_the_plan_and_holds_the_sharded_state(tmp_path):
    for schedule in ("zero3", "fcdp"):
        result, top = run_step(tmp_path, SMALL + f', schedule = "{schedule}"')
        p = 8
        state = sum(8 * shard_bytes(2 * layer.params, p) for layer in step_layers(SHAPE, StepOptions(schedule)))
        checkpoints = sum(layer.kept for layer in step_layers(SHAPE, StepOptions(schedule)))
        assert state + checkpoints < result.peak_bytes <= result.planned_peak_bytes
        gpus = [c for c in top.walk() if type(c).__name__ == "Gpu"]
        assert all(g.memory.value == state for g in gpus)  # everything allocated was freed


def test_fcdp_placement_keeps_slices_on_the_gpu_when_they_fit(tmp_path):
    roomy, _ = run_step(tmp_path, SMALL + ', schedule = "fcdp", placement = "auto"')
    host, _ = run_step(tmp_path, SMALL + ', schedule = "fcdp", placement = "host"')
    assert roomy.link_bytes["host PCIe"] == 0
    assert roomy.link_bytes["inter-node"] == host.link_bytes["inter-node"]
    assert roomy.peak_bytes > host.peak_bytes
    assert roomy.step_ps <= host.step_ps  # the host copies overlap the network here


def test_flat_ring_crosses_nodes_on_every_boundary(tmp_path):
    flat, _ = run_step(tmp_path, SMALL + ', schedule = "zero3", hierarchical = false')
    p = 8
    per_layer = [p * shard_bytes(2 * layer.params, p) for layer in step_layers(SHAPE, StepOptions("zero3"))]
    # The ring over all 8 GPUs crosses between the 2 nodes twice; each of its links carries
    # 7 shards per collective.
    assert flat.link_bytes["inter-node"] == 3 * 2 * sum((p - 1) * b // p for b in per_layer)


def test_same_system_same_step(tmp_path):
    first, _ = run_step(tmp_path, SMALL + ', schedule = "fcdp", algorithm = "tree", chunks = 2')
    second, _ = run_step(tmp_path, SMALL + ', schedule = "fcdp", algorithm = "tree", chunks = 2')
    assert first == second


def test_fcdp_beats_zero3_on_10_gbe_and_the_gap_closes_with_bandwidth(tmp_path):
    speedups = []
    for rate in ("10 Gbit/s", "25 Gbit/s", "100 Gbit/s"):
        zero3, _ = run_step(tmp_path, 'model = "1.3b", schedule = "zero3"', inter_bandwidth=rate)
        fcdp, _ = run_step(tmp_path, 'model = "1.3b", schedule = "fcdp"', inter_bandwidth=rate)
        speedups.append(zero3.step_ps / fcdp.step_ps)
    assert speedups[0] > 1.3
    assert speedups[0] > speedups[1] > speedups[2]


def test_a_layer_time_table_replaces_the_flops(tmp_path):
    # Four blocks at 300 us forward (900 us backward with recomputation); the head from FLOPs.
    result, _ = run_step(tmp_path, SMALL + ', schedule = "zero3", layer_times_us = [300, 300, 300, 300]')
    head = 2 * 256 * 512 * 50257
    heads = sum(-(-round(f / 150.0) // 1000) * 1000 for f in (head, 2 * head))
    assert result.compute_ps == 4 * (300 + 900) * 10**6 + heads


@pytest.mark.parametrize("gpus", [1, 4])
def test_one_node_needs_no_nic_and_one_gpu_no_collective(tmp_path, gpus):
    from archmodel.kernel import Simulator
    from archmodel.lang import load

    path = tmp_path / "one.arch"
    path.write_text('import "training.arch"\n'
                    f"system One {{\n    node : GpuNode(gpus = {gpus})\n"
                    f"    run train_step({SMALL}, schedule = \"zero3\") on node\n}}\n")
    top = load(path).top
    Simulator(top).run()
    result = top.child("step").result()
    assert result.finished and result.link_bytes["inter-node"] == 0
    state = sum(8 * shard_bytes(2 * layer.params, gpus) for layer in step_layers(SHAPE, StepOptions("zero3")))
    gpu = next(c for c in top.walk() if type(c).__name__ == "Gpu")
    assert gpu.memory.value == state
    if gpus == 1:
        assert result.step_ps == result.compute_ps and result.comm_ps == 0
        assert result.link_bytes == dict.fromkeys(result.link_bytes, 0)


def test_a_nic_per_gpu_on_rails_carries_the_same_bytes_faster(tmp_path):
    from archmodel.kernel import Simulator
    from archmodel.lang import load
    from archmodel.paths import data_path

    results = {}
    for rails in ("false", "true"):
        top = load(data_path("topologies") / "training_cluster.arch",
                   params={"model": '"1.3b"', "schedule": '"zero3"', "rails": rails}).top
        Simulator(top).run()
        results[rails] = top.child("step").result()
    shared, own = results["false"], results["true"]
    assert own.link_bytes == shared.link_bytes
    # Each node's 4 rails share nothing: the step is bound by them until compute shows.
    assert own.step_ps < shared.step_ps / 2
