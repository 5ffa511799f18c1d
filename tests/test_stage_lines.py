"""Stage lines on stderr for long CLI jobs (issue 17, point 6): each stage once, after two seconds, none
with --quiet."""
from __future__ import annotations

import io

from ppdp_desktop.cli.stages import StageLines


def test_quick_jobs_stay_silent_and_long_ones_say_each_stage_once() -> None:
    out = io.StringIO()
    quick = StageLines(stream=out)
    quick(0.1, "Planning")
    assert out.getvalue() == ""
    slow = StageLines(stream=out, after=0.0)
    part = slow.part(0.5, 1.0)
    part(0.0, "Writing the data")
    part(0.2, "Writing the data")  # the same stage: said once
    part(1.0, "Exported")
    assert out.getvalue().splitlines() == ["ppdp:  50% Writing the data", "ppdp: 100% Exported"]


def test_quiet_says_nothing() -> None:
    out = io.StringIO()
    stages = StageLines(quiet=True, stream=out, after=0.0)
    stages(0.5, "Applying the plan")
    assert out.getvalue() == ""
