"""scripts/cpu_call_timeline.py with the columns of a panel each work-item of the panels' pack
takes (`PANEL_RUN` in clgemm/configs/launch.py) set to RUN for this process, so that runs in
turns show what the pack's number of work-groups costs on a CPU device:
    python scripts/cpu_timeline_panel_run.py RUN DEVICE ROUNDS SIZE [SIZE...]"""

import runpy
import sys

import clgemm.configs.launch as launch

launch.PANEL_RUN = int(sys.argv[1])
print(f"# PANEL_RUN={launch.PANEL_RUN}")
sys.argv = ["cpu_call_timeline.py", *sys.argv[2:]]
runpy.run_path("scripts/cpu_call_timeline.py", run_name="__main__")
