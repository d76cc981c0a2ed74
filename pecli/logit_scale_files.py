"""``encode --logit-scale``'s files: each layer group's logit scale at the positions, float64, written block by
block into an ``.npy`` file (one group) or the ``GROUP/logit_scale`` members of an ``.npz`` archive, as
:mod:`pecli.encoding_files` writes encodings (:mod:`pecli.io_stream`): no array of the length is ever whole
unless the positions were given as ids.

Library code: :func:`logit_scale_memory` is the memory model (checked before work), :func:`write_logit_scales`
the writer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from pecli.models.logit_scale import LogitScale
from pecli.progress import task

#: Positions whose scales are computed at once.
BLOCK_POSITIONS = 1 << 18
#: Float64 arrays of a block's length alive while one group's scale is computed
#: (:meth:`~pecli.models.logit_scale.LogitScale.at`: the positions, two temporaries, the result).
WORKING_ARRAYS = 4
#: Blocks of each group's values alive at once: the one being made and the one being written.
WRITTEN_COPIES = 2


def logit_scale_memory(count: int, groups: int, *, ids_given: bool) -> int:
    """Bytes :func:`write_logit_scales` holds at its peak for ``count`` positions and ``groups`` layer groups.

    A block of ``b = min(count, BLOCK_POSITIONS)`` positions: ``8·b`` for the positions as float64,
    ``8·b·WORKING_ARRAYS`` while a group's scale is computed, ``8·b·WRITTEN_COPIES`` per group for the
    values made and being written; plus ``8·count`` when the positions were given as ids (they are held
    whole). Flat in the length otherwise: 1 group, 2^18 positions a block: 14 MiB.
    """
    block = min(max(count, 0), BLOCK_POSITIONS)
    return 8 * block * (1 + WORKING_ARRAYS + WRITTEN_COPIES * max(groups, 1)) + (8 * count if ids_given else 0)


def _blocks(positions: range | np.ndarray) -> Iterator[np.ndarray]:
    """The positions as float64, :data:`BLOCK_POSITIONS` at a time (a ``range`` is never made whole)."""
    count = len(positions)
    for start in range(0, count, BLOCK_POSITIONS):
        stop = min(start + BLOCK_POSITIONS, count)
        if isinstance(positions, range):
            chunk = positions[start:stop]
            yield np.arange(chunk.start, chunk.stop, chunk.step, dtype=np.float64)
        else:
            yield np.asarray(positions[start:stop], dtype=np.float64)


def write_logit_scales(path: str | os.PathLike, positions: range | np.ndarray, scales: Sequence[tuple[str, LogitScale]],
                       metadata: dict[str, Any] | None, *, force: bool) -> Path:
    """Write each scale at ``positions`` (float64), atomically: an ``.npy`` of the one scale when
    ``metadata`` is None, else an ``.npz`` with the member ``NAME/logit_scale`` per scale and ``metadata``
    as a JSON string under ``metadata``; progress in MiB written."""
    from pecli.encoding_files import MIB, _Progress, _syncer
    from pecli.io import write_atomic
    from pecli.io_stream import BlockWriter, Region, ZipLayout, npy_header

    count, float64 = len(positions), np.dtype(np.float64)
    if metadata is None and len(scales) != 1:
        raise ValueError("an .npy file holds one logit scale")

    def write(stream) -> None:
        fd = stream.fileno()
        layout = None if metadata is None else ZipLayout(fd)
        if layout is None:
            regions = [Region(fd, 0, npy_header((count,), float64), 8 * count, float64)]
        else:
            regions = [layout.reserve(f"{name}/logit_scale", (count,), float64) for name, _ in scales]
        total = -(-8 * count * len(scales) // MIB)
        with task("logit scale MiB", total=total) as bar, BlockWriter(_Progress(bar), _syncer(fd)) as writer:
            for block in _blocks(positions):
                writer.put([(region, scale.at(block)) for region, (_, scale) in zip(regions, scales)])
            if layout is not None:
                document = np.array(json.dumps(metadata, sort_keys=True))
                writer.put([(layout.reserve("metadata", (), document.dtype), document)])
        for region in regions:
            region.check_complete()
        if layout is not None:
            layout.close()

    return write_atomic(path, write, force=force)


__all__ = ["BLOCK_POSITIONS", "logit_scale_memory", "write_logit_scales"]
