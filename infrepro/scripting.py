"""Support for the thin Snakemake rule scripts: log to the rule's log file, fail loudly."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def run_rule_script(main: Callable[[Any], None], smk: Any) -> None:
    """Run ``main(snakemake)`` with logging sent to the rule's ``log`` file and to stderr.

    An exception is logged with its traceback (so the log explains the failure) and re-raised so
    that Snakemake marks the job failed and removes its outputs.
    """
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if len(smk.log):
        handlers.append(logging.FileHandler(str(smk.log[0]), mode="w", encoding="utf-8"))
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, handlers=handlers, force=True)
    try:
        main(smk)
    except Exception:
        logging.getLogger("infrepro").exception("rule %s failed", smk.rule)
        raise
