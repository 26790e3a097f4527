"""How a BDL fit or prediction runs: its torch threads, the malloc setting that goes with
them, and its progress bar.

Imports torch, tqdm (when a bar is shown) and :mod:`surrogates.allocator`.
"""
import contextlib

import torch

from .allocator import apply_from_environment

__all__ = ["PROGRESS_DELAY", "torch_threads", "epoch_bar"]

#: Seconds a fit runs before its progress bar appears (``progress=None``).
PROGRESS_DELAY = 5.0


@contextlib.contextmanager
def torch_threads(n):
    """Run the block with ``n`` torch threads (None: leave the setting alone), with freed
    memory kept for reuse where ``UQKIT_MALLOC=keep`` asks for it
    (:mod:`surrogates.allocator`)."""
    apply_from_environment()
    threads = torch.get_num_threads()
    if n:
        torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def epoch_bar(progress, epochs, desc):
    """A tqdm bar over ``epochs`` epochs per the estimators' ``progress`` setting (False: none;
    None: on a terminal, once a fit has run for ``PROGRESS_DELAY`` seconds; True: at once)."""
    if progress is False:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=epochs, desc=desc, unit="epoch", dynamic_ncols=True,
                delay=PROGRESS_DELAY if progress is None else 0.0,
                disable=None if progress is None else False)
