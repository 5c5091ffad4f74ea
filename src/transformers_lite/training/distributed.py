"""Data-parallel training with ``torchrun`` (DistributedDataParallel).

``torchrun --nproc_per_node=N -m transformers_lite train ...`` sets ``RANK``/``WORLD_SIZE``; the
trainer then wraps the model in DDP over gloo (CPU) or nccl (CUDA). Rank ``r`` of ``W`` trains on
micro-batch numbers ``g·W + r``, so together the ranks see exactly the micro-batches a single
process with ``accumulate = W`` would see (global batch = per-rank batch x ranks x accumulation).
Only rank 0 writes the run directory, checkpoints, logs and the progress bar.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class DistContext:
    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def active(self) -> bool:
        return self.world > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


SINGLE = DistContext()


def launched_by_torchrun() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def setup(device: str, timeout_s: float = 300.0) -> tuple[DistContext, str]:
    """Initialise the process group from torchrun's environment; return the context and the device.

    A rank that dies makes the others fail at their next collective (or after ``timeout_s``)
    instead of hanging; torchrun then ends the job with a non-zero exit code.
    """
    if not launched_by_torchrun():
        return SINGLE, device
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if device == "cuda":
        torch.cuda.set_device(local)
        device, backend = f"cuda:{local}", "nccl"
    else:
        backend = "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s))
    return DistContext(rank, world, local), device


def all_reduce_sum(values: list[float], ctx: DistContext, device: torch.device) -> list[float]:
    if not ctx.active:
        return values
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return t.tolist()


def broadcast(obj, ctx: DistContext):  # noqa: ANN001, ANN201
    """Rank 0's object on every rank."""
    if not ctx.active:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def gather_rng(ctx: DistContext) -> list[torch.Tensor]:
    """Every rank's torch RNG state (its dropout stream), gathered on all ranks."""
    state = torch.get_rng_state()
    if not ctx.active:
        return [state]
    states: list = [None] * ctx.world
    dist.all_gather_object(states, state)
    return states


def same_weights_everywhere(model: torch.nn.Module, ctx: DistContext) -> bool:
    """True when every rank holds bitwise the same parameters (checked at the end of training)."""
    if not ctx.active:
        return True
    with torch.no_grad():
        flat = torch.cat([p.detach().reshape(-1).double() for p in model.parameters()])
    reference = flat.clone()
    dist.broadcast(reference, src=0)
    flag = torch.tensor([int(torch.equal(flat, reference))], device=flat.device)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return bool(flag.item())


def cleanup(ctx: DistContext) -> None:
    if ctx.active and dist.is_initialized():
        dist.destroy_process_group()
