"""The engine of a matrix run: planning (`plan`), one run (`execute`), the runner's own wire checks, the known-
failures file, the events writers consume, and the engine that runs every planned run once and judges each case.
The rig it drives lives in `harness.rig`; the verdict comes from `harness.diff`."""
