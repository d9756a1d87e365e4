"""The measuring instruments behave like the torch objects they stand in for, and record what they claim."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from checker.setting.instruments import (
    ForwardProbe,
    HostTensor,
    RecordingSGD,
    RecordingStepLR,
    SavedTensorMeter,
    SpyLoss,
    Tape,
    TapedLoader,
    is_tagged,
    lesson_mlp,
    step_gradients,
    tag,
    untag,
)


@pytest.fixture(scope="module")
def data():
    from checker.setting.tracks import get_track

    return get_track("moons").split(0)


def test_lesson_mlp_is_the_lessons_init_and_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    model = lesson_mlp(0)
    assert torch.equal(torch.random.get_rng_state(), before)
    torch.manual_seed(0)
    lesson = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), lesson.parameters(), strict=True))
    dropout = lesson_mlp(0, dropout=0.5)
    assert sum(p.numel() for p in dropout.parameters()) == 82
    assert any(isinstance(m, nn.Dropout) for m in dropout.modules())


def test_host_tensor_loses_its_tag_only_when_moved(data):
    x = tag(data.X_train)
    assert is_tagged(x[:3]) and is_tagged(torch.stack([x[0], x[1]])) and is_tagged(x * 2)
    assert is_tagged(lesson_mlp(0)(x[:4]))  # a forward pass keeps it
    for moved in (x.to("cpu"), x.cpu(), x.to(torch.device("cpu")), x.to("cpu", non_blocking=True)):
        assert type(moved) is torch.Tensor
    assert type(untag(x)) is torch.Tensor and torch.equal(untag(x), data.X_train)
    assert isinstance(x, HostTensor)


def test_taped_loader_is_the_lessons_loader_and_marks_epochs(data):
    tape = Tape()
    index = torch.arange(150)
    ours = TapedLoader(data.X_train, index, tape, seed=3)
    lesson = DataLoader(TensorDataset(data.X_train, index), batch_size=32, shuffle=True,
                        generator=torch.Generator().manual_seed(3))
    assert isinstance(ours, DataLoader) and len(ours.dataset) == 150 and len(ours) == 5
    for _ in range(2):
        got = [(x.clone(), i.clone()) for x, i in ours]
        want = list(lesson)
        assert [len(i) for _, i in got] == [32, 32, 32, 32, 22]
        assert all(torch.equal(a, c) and torch.equal(b, d) for (a, b), (c, d) in zip(got, want, strict=True))
    assert tape.epoch == 2 and [e["kind"] for e in tape.events] == ["epoch", "epoch"]


def test_spy_loss_is_cross_entropy_and_takes_its_own_gradient(data):
    tape = Tape()
    model = lesson_mlp(0)
    params = list(model.parameters())
    spy = SpyLoss(tape, params)
    x, y = data.X_train[:32], data.y_train[:32]
    loss = spy(model(x), y)
    assert float(loss.detach()) == float(nn.CrossEntropyLoss()(model(x), y).detach())
    loss.backward()  # the spy's own gradient left .grad alone, and the graph usable
    event = tape.of("loss")[0]
    assert event["n"] == 32 and event["requires_grad"] and not event["target_tagged"]
    assert all(torch.equal(g, p.grad) for g, p in zip(event["grads"], params, strict=True))
    with torch.no_grad():
        spy(model(x), y)
    assert "grads" not in tape.of("loss")[1] and not tape.of("loss")[1]["grad_enabled"]


def test_recording_sgd_is_sgd_and_records_each_step(data):
    tape = Tape()
    model, twin = lesson_mlp(0), lesson_mlp(0)
    opt = RecordingSGD(model.parameters(), lr=1.0, tape=tape, model=model, keep_grads=True)
    plain = torch.optim.SGD(twin.parameters(), lr=1.0)
    assert isinstance(opt, torch.optim.SGD)
    sched = RecordingStepLR(opt, step_size=1, gamma=0.5, tape=tape)
    x, y = data.X_train[:32], data.y_train[:32]
    for _ in range(2):
        for m, o in ((model, opt), (twin, plain)):
            o.zero_grad()
            nn.functional.cross_entropy(m(x), y).backward()
            o.step()
        sched.step()
        plain.param_groups[0]["lr"] *= 0.5
    steps = tape.of("step")
    assert [s["lrs"] for s in steps] == [[1.0], [0.5]]
    assert all(s["training"] for s in steps) and len(tape.of("sched")) == 2
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), twin.parameters(), strict=True))


def test_saved_tensor_meter_counts_live_graphs_only(data):
    model = lesson_mlp(0)
    meter = SavedTensorMeter()
    kept = []
    with meter:
        for _ in range(3):
            loss = nn.functional.cross_entropy(model(data.X_train), data.y_train)
            kept.append(loss)  # the graph stays alive with it
        assert meter.live_bytes > 0
        per_graph = meter.live_bytes / 3
        with torch.no_grad():
            model(data.X_train)
    assert meter.live_bytes == pytest.approx(3 * per_graph)
    kept.pop().backward()  # backward frees that graph's saved tensors
    assert meter.live_bytes == pytest.approx(2 * per_graph)
    kept.clear()
    del loss
    assert meter.live_bytes == 0


def test_forward_probe_sees_modes_and_graphs(data):
    tape = Tape()
    model = lesson_mlp(0, dropout=0.5)
    probe = ForwardProbe(model, tape)
    model(tag(data.X_train[:4]))
    model.eval()
    with torch.inference_mode():
        model(data.X_train[:4])
    first, second = tape.of("forward")
    assert first["training"] and first["graph"] and first["input_tagged"]
    assert not second["training"] and not second["graph"] and second["inference"]
    probe.remove()
    model(data.X_train[:4])
    assert len(tape.of("forward")) == 2


def test_step_gradients_tells_fresh_from_accumulated(data):
    def run(clear: bool):
        tape = Tape()
        model = lesson_mlp(0)
        params = list(model.parameters())
        spy = SpyLoss(tape, params)
        opt = RecordingSGD(params, lr=0.1, tape=tape, model=model, keep_grads=True)
        for start in range(0, 96, 32):
            if clear:
                opt.zero_grad()
            spy(model(data.X_train[start:start + 32]), data.y_train[start:start + 32]).backward()
            opt.step()
        return step_gradients(tape, params)

    fresh, stale = run(True), run(False)
    assert all(r["rel"] == 0.0 and r["connected"] and not r["accumulated"] for r in fresh)
    assert stale[0]["rel"] == 0.0
    assert all(r["accumulated"] and r["rel"] > 0.1 for r in stale[1:])
