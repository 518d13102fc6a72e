"""Pictures of agent behaviour: actions drawn on screenshots (:mod:`digirl.viz.draw`) and episode
videos (:mod:`digirl.viz.video`). Used by the viewer, ``digirl data export-video``, evaluation
reports and Digi-Q's candidate report. Depends on Pillow and numpy only (imageio for videos)."""
