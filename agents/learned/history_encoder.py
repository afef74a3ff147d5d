"""A recurrent encoder of the hand's actions in order: the observation's ``history`` rows
(rule option ``observation="history"``, whist_env/envs/encoding.py) read by a GRU (Cho et al.
2014), for actors that need the order of play ("return the partner's suit")."""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn


class HistoryEncoder(nn.Module):
    """Summarises the ``history`` rows of observations: each action is embedded as the sum of
    embeddings of its actor (relative seat), its action id (A for a face-down choice), its trick
    and its position in the trick (-1 for actions that are not card plays), and a GRU reads them
    in order; the summary is the GRU's output after the last action (zeros before any).

    Args:
        layout: the environment's ``observation_layout()``, with ``history`` (4 L entries) and
            ``history_mask`` (L).
        num_players: N. num_actions: A.
        width: H, the embedding and GRU width.
    Raises:
        ValueError: the layout has no history blocks, or their sizes do not agree.
    """

    def __init__(self, layout: Mapping[str, slice], num_players: int, num_actions: int, width: int) -> None:
        super().__init__()
        if "history" not in layout or "history_mask" not in layout:
            raise ValueError("the observation has no history blocks: make the environment with observation='history'")
        rows, mask = layout["history"], layout["history_mask"]
        self.length = mask.stop - mask.start
        if rows.stop - rows.start != 4 * self.length:
            raise ValueError(f"history has {rows.stop - rows.start} entries, expected 4 x {self.length}")
        self.rows, self.mask = rows, mask
        self.width = int(width)
        self.actor = nn.Embedding(num_players, width)
        self.action = nn.Embedding(num_actions + 1, width)
        self.trick = nn.Embedding(self.length + 1, width)  # tricks 0.. (at most L of them), -1 shifted to 0
        self.position = nn.Embedding(num_players + 1, width)
        self.gru = nn.GRU(width, width, batch_first=True)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """The summary float32 ``(B, H)`` of observations float32 ``(B, D)``."""
        b = obs.shape[0]
        count = obs[:, self.mask].sum(1).long()
        valid = torch.arange(self.length, device=obs.device)[None, :] < count[:, None]
        rows = obs[:, self.rows].reshape(b, self.length, 4).long() * valid[..., None]  # nothing past the actions is read
        x = self.actor(rows[..., 0]) + self.action(rows[..., 1]) + self.trick(rows[..., 2] + 1) + self.position(rows[..., 3] + 1)
        steps = max(int(count.max()), 1) if b else 1  # rows past every observation's last action are not read
        out, _ = self.gru(x[:, :steps])
        last = out[torch.arange(b, device=obs.device), (count - 1).clamp(min=0)]
        return last * (count > 0).to(last.dtype)[:, None]
