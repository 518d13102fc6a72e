"""Episode videos: frames per step plus the outcome, GIF and MP4 written through imageio and read back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.data.trajfactory import build_traj

iio = pytest.importorskip("imageio.v3")


def test_frames_one_per_step_plus_outcome_all_one_even_size() -> None:
    from digirl.viz.video import episode_frames

    t = build_traj(4, seed=1)
    frames = episode_frames(t)
    assert len(frames) == 5 and len({f.shape for f in frames}) == 1
    h, w, _ = frames[0].shape
    assert h % 2 == 0 and w % 2 == 0 and w == 16 * 6 and h > 8 * 6  # enlarged x6, caption band above


def test_gif_and_mp4_round_trip(tmp_path: Path) -> None:
    from digirl.viz.video import episode_frames, write_episode_video

    t = build_traj(3, seed=2)
    gif = write_episode_video(t, tmp_path / "a.gif", fps=2)
    back = iio.imread(gif, index=None)
    assert back.shape[0] == 4 and back.shape[1:3] == episode_frames(t)[0].shape[:2]
    pytest.importorskip("av")
    mp4 = write_episode_video(t, tmp_path / "a.mp4")
    assert iio.imread(mp4, plugin="pyav", index=None).shape[0] == 4


def test_bad_requests_are_clear(tmp_path: Path) -> None:
    from digirl.viz.video import episode_frames, write_video

    with pytest.raises(ValueError, match="format"):
        write_video([np.zeros((4, 4, 3), np.uint8)], tmp_path / "x.avi")
    with pytest.raises(ValueError, match="no frames"):
        write_video([], tmp_path / "x.gif")
    t = build_traj(2, seed=3)
    t.steps[0].observation.screenshot = np.zeros((0, 0, 3), np.uint8)  # as loaded with load_images=False
    with pytest.raises(ValueError, match="load_images=False"):
        episode_frames(t)
