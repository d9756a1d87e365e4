"""The lab: what every check shares; it travels to each child with its job.

It holds the track (``checker.setting.tracks.Track``: the setting as data), the device, the track's data
split, and (set per job) the arguments the parent drew for the differential checks.
"""

from __future__ import annotations

import dataclasses
import json

import checker.sandbox.jobs  # noqa: F401  (sets the fork-safe CUDA check before torch is asked)
from checker.base.errors import UsageProblem
from checker.base.term import console
from checker.sandbox.zygote import preload, prestart
from checker.setting.tracks import (
    DataSpec,
    LessonData,
    Track,
    TrackError,
    all_tracks,
    arrays_of,
    get_track,
    lesson_data,
    split_of,
    tracks_dir,
)


def _without_capture_check(optimizer):
    """``optimizer`` with its CUDA-graph capture check turned off (on this instance only). Adam's step() asks
    whether the current CUDA stream is capturing, and that question initialises CUDA where torch has it and a
    GPU is there: in the zygote, it would leave every forked child unable to use the GPU ("CUDA error:
    initialization error"). The warm-up runs on the CPU and captures nothing; the learner's own optimizers, in
    the children, keep the check. (The method's name changed in torch 2.10: both are set.)"""
    optimizer._accelerator_graph_capture_health_check = _no_check
    optimizer._cuda_graph_capture_health_check = _no_check
    return optimizer


def _no_check() -> None:
    return None


def fork_sensitive() -> bool:
    """Whether this torch was built for an accelerator (CUDA, ROCm, ...), asked without initialising it.

    Then the zygote must not run a backward pass: autograd's engine, on its first backward, counts the devices of
    every kind torch was built for, and counting CUDA devices initialises CUDA, after which no forked child can
    use the GPU ("CUDA error: initialization error"). Seen on an H200 with torch 2.11."""
    import torch

    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "current_accelerator"):
        return accelerator.current_accelerator() is not None  # compile-time answer: does not poison fork
    return torch.backends.cuda.is_built()


def warm_up_torch() -> None:
    """Exercise once what torch sets up lazily on first use (optimizer step wrappers, seeding).

    Done in the parent before forking: children start warm, and the tamper guard's snapshot
    sees torch's own lazy patching as already done. Where torch was built for an accelerator
    (``fork_sensitive``), without any backward pass: the gradients are set by hand, and each child runs its
    own first backward (the guard accepts what that sets up).
    """
    import torch
    from torch import nn

    backward = not fork_sensitive()
    torch.set_num_threads(1)
    state = torch.random.get_rng_state()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Dropout(0.1))
    loss_fn = nn.CrossEntropyLoss()

    def gradients(loss) -> None:
        if backward:
            loss.backward()
        else:
            for p in model.parameters():
                p.grad = torch.full_like(p, 0.01)

    for cls in (torch.optim.SGD, torch.optim.Adam):
        optimizer = _without_capture_check(cls(model.parameters(), lr=0.1))
        for sched in (
            torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5),
            torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=3),
        ):
            optimizer.zero_grad()
            gradients(loss_fn(model(torch.zeros(2, 2)), torch.zeros(2, dtype=torch.int64)))
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            sched.step()
    # torch patches an optimizer class's step() the first time one is built: do it here for the
    # recording optimizers too, so the children's tamper guard never sees torch's own patching
    from checker.setting.instruments import RecordingAdam, RecordingCosineLR, RecordingSGD, RecordingStepLR, Tape

    tape = Tape()
    for cls in (RecordingSGD, RecordingAdam):
        optimizer = _without_capture_check(cls(model.parameters(), lr=0.1, tape=tape, model=model))
        schedulers = (RecordingStepLR(optimizer, step_size=10, gamma=0.5, tape=tape),
                      RecordingCosineLR(optimizer, T_max=3, tape=tape))
        for sched in schedulers:
            optimizer.zero_grad()
            gradients(loss_fn(model(torch.zeros(2, 2)), torch.zeros(2, dtype=torch.int64)))
            optimizer.step()
            sched.step()
    # tagged tensors (checker.setting.instruments.HostTensor) dispatch through Python on first use of each op:
    # the differential checks' device runs feed them through loaders, models, losses and moves
    from torch.utils.data import DataLoader, TensorDataset

    from checker.setting.instruments import BatchDataset, recording_moves, tag

    X, y = torch.zeros(4, 2), torch.zeros(4, dtype=torch.int64)
    with recording_moves():
        for dataset, collate in ((BatchDataset(tag(X), tag(y)), list), (TensorDataset(tag(X), tag(y)), None)):
            for xb, yb in DataLoader(dataset, batch_size=2, collate_fn=collate):
                model.train()
                gradients(loss_fn(model(xb.to("cpu")), yb.to("cpu")))
                model.eval()
                with torch.no_grad():
                    logits = model(torch.cat([tag(X), xb]).to(None))
                    loss_fn(logits, torch.cat([tag(y), yb])).item()
                    (logits.argmax(dim=1) == torch.cat([tag(y), yb])).float().mean().item()
    model.zero_grad()
    torch.random.set_rng_state(state)


def import_heavy() -> None:
    """Import scikit-learn and torch, one after the other (torch._dynamo, the other long import, is warmed late:
    ``warm_up_late``).

    Called once in the zygote before forking children, so no child pays the import. (Importing
    scikit-learn in a second thread used to overlap part of the work; with torch 2.13 the two imports
    contend for the GIL and the pair takes about 0.3 s longer than in sequence.)
    """
    import os

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    import sklearn.datasets  # noqa: F401
    import sklearn.model_selection  # noqa: F401
    import torch  # noqa: F401


def warm_up() -> None:
    """A new zygote's warm-up (registered with ``checker.sandbox.zygote.preload``): torch and scikit-learn
    imported, the built-in tracks' data computed once, so no child repeats it. All of it before the early twin
    is forked; torch._dynamo comes after (``warm_up_late``)."""
    import_heavy()
    try:
        for track in all_tracks().values():
            if not track.data.trusted:  # those come with the lab, read in kata's own process
                track.split(0)
    except Exception:  # noqa: BLE001 - a track that cannot load is reported where it is used
        pass


def warm_up_late() -> None:
    """The zygote's late warm-up, after its early twin is forked: torch._dynamo (the first optimizer imports it,
    so every job that trains needs it), then torch's lazy set-up exercised once (``warm_up_torch``)."""
    import torch._dynamo  # noqa: F401

    warm_up_torch()


preload(f"{__name__}:warm_up")
preload(f"{__name__}:warm_up_late", late=True)


def warm_data(fields: dict) -> None:
    """A new zygote's warm-up for the data of a track it cannot find itself (a course's: the zygote runs in ``/``,
    without ``$KATA_COURSE`` or ``$KATA_TRACKS``): the track's ``DataSpec``, as ``track_preload`` sends its fields,
    computed once, as ``warm_up`` does for the built-in tracks, so no child repeats it (``split_of`` keeps it).
    Never raises: a track whose data cannot load is reported where it is used."""
    try:
        split_of(DataSpec(**{**fields, "params": tuple(tuple(p) for p in fields["params"])}), 0)
    except Exception:  # noqa: BLE001
        pass


def track_preload(track: Track) -> str | None:
    """The zygote's warm-up for ``track``'s data (``warm_data``, with its ``DataSpec``) where ``warm_up`` does not
    already compute it: a track outside kata's own folder whose data a child would compute; else None."""
    if track.data.trusted or track.file.parent.resolve() == tracks_dir().resolve():
        return None
    return f"{__name__}:warm_data " + json.dumps([dataclasses.asdict(track.data)])


class Lab:
    def __init__(self, device: str = "cpu", track: Track | str | None = None):
        self.device = device
        self.track: Track = track if isinstance(track, Track) else get_track(track)
        self.draw = None
        """The differential checks' arguments (``checker.setting.draws.Draw``), set in each child before it measures."""
        self.arrays = None
        """The track's data as numpy arrays, read here (kata's own, trusted process) when the track's data comes
        from a file or from the reference's make_data (``DataSpec.trusted``): both are hidden from the children,
        which get the data with the lab."""
        self._data: LessonData | None = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_data"] = None  # tensors are rebuilt from the arrays where they are used
        return state

    def prepare(self) -> Lab:
        """Start the zygote now (``checker.sandbox.zygote``): it imports torch, warms it up and computes the built-in
        tracks' data once, beside the caller's own work, so no child repeats it. The caller itself needs
        no torch to grade: verdicts are judged from plain figures."""
        spec = track_preload(self.track)
        if spec is not None:  # before the zygote is told what to warm (its one W message, sent by prestart)
            preload(spec)
        prestart()
        self.load_trusted()
        return self

    def load_trusted(self) -> None:
        """Read the track's data here when only a trusted process may (a file, the reference's make_data)."""
        if self.arrays is None and self.track.data.trusted:
            self.arrays = arrays_of(self.track.data, 0)

    @property
    def data(self) -> LessonData:
        if self._data is None:
            if self.track.data.trusted:
                if self.arrays is None:
                    raise TrackError(f"track {self.track.id}: its data ({self.track.data.call()}) is read only in "
                                     f"kata's own process, and this lab was not prepared there")
                self._data = lesson_data(self.arrays)
            else:
                self._data = self.track.split(0)
        return self._data


def prepared_lab(device: str = "cpu", track=None) -> Lab:
    """Import torch and scikit-learn once, build the lab; children fork from here.

    That takes a few seconds: on a terminal a transient status line says so (on stderr).
    """
    if device != "cpu" and not device.startswith("cuda"):
        raise UsageProblem(f"--device {device}: use cpu or cuda[:N]")
    err = console(stderr=True)
    if not err.is_terminal:
        return _prepare(device, track)
    with err.status("importing torch and scikit-learn…", spinner="dots"):
        return _prepare(device, track)


def _prepare(device: str, track=None) -> Lab:
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UsageProblem(f"--device {device}: CUDA is not available on this machine (use --device cpu)")
    try:
        return Lab(device=device, track=track).prepare()
    except TrackError as exc:
        raise UsageProblem(str(exc)) from None
