"""Plan files: ``--plan-out FILE`` saves a repair's plan as JSON; ``pelctl apply FILE`` runs it.

A plan file is reviewable JSON, **sealed** and **bound** to what it was made for; applying it
never trusts it blindly:

- :func:`load` refuses a file bigger than :data:`MAX_BYTES` or with more than
  :data:`MAX_ITEMS` items, a file that is not a whole plan, and a plan whose seal does not
  verify: an HMAC-SHA256 over a canonical serialisation of the whole plan (header and
  items), keyed with the user's plan key (:func:`plan_key`: ``$XDG_STATE_HOME/pelctl/
  plan.key``, made on first use, mode 0600; ``PELCTL_PLAN_KEY`` overrides it so a team can
  share plans). Any edit — the action, the group, an id, ``server_id``, an item removed — or
  a plan sealed with another key is refused (exit 2). To narrow a plan, make a new one.
  Then every field is validated: only the repairs that ``--plan-out`` saves, stream ids
  (``ms-seq``, both parts below 2^64), consumer names, item actions the repair can produce;
- :func:`check_target` refuses a plan made on another server (its ``run_id`` must be the
  one the plan recorded; a plan without one is refused, never waved through), on another
  database (``db``), on a stream that was deleted and created again since (its
  ``entries-added`` counter went back), or whose stream or group is gone;
- :func:`verify` re-reads each entry (read-only) so the confirmation shows how many are
  still as planned; the scripts then re-verify each entry again, atomically with its
  change: still pending, same owner, same delivery count, still idle enough.

Names and ids are written with :func:`pelctl.base.binary.escape`, so binary names survive.

The modules, each importing only those before it:

- :mod:`~pelctl.core.plan.fields`: one field of the file, read and validated;
- :mod:`~pelctl.core.plan.sealing`: the plan key, the seal, ``PlanRefused``;
- :mod:`~pelctl.core.plan.document`: the plan as JSON (``to_json``, ``from_json``,
  ``item_to_json``, ``params_json``; format, version, ``MAX_ITEMS``);
- :mod:`~pelctl.core.plan.file`: the file (``dumps``, ``save``, ``load``, ``MAX_BYTES``);
- :mod:`~pelctl.core.plan.checks`: before applying (``check_target``, ``verify``).

This package gives the library (docs/safety.md: ``from pelctl.core.plan import save``) their
public names; pelctl's own modules import from the module that defines a name.
"""

from __future__ import annotations

from pelctl.core.plan.checks import Verification, check_target, verify
from pelctl.core.plan.document import (
    FORMAT,
    ITEM_ACTIONS,
    MAX_ITEMS,
    READABLE,
    VERSION,
    from_json,
    item_to_json,
    params_json,
    to_json,
)
from pelctl.core.plan.file import MAX_BYTES, dumps, load, save
from pelctl.core.plan.sealing import (
    KEY_ENV,
    NARROW_HINT,
    SEAL_ALG,
    SHARE_HINT,
    PlanRefused,
    canonical,
    check_seal,
    key_id,
    plan_key,
    seal,
)

__all__ = [
    "FORMAT",
    "ITEM_ACTIONS",
    "KEY_ENV",
    "MAX_BYTES",
    "MAX_ITEMS",
    "NARROW_HINT",
    "READABLE",
    "SEAL_ALG",
    "SHARE_HINT",
    "VERSION",
    "PlanRefused",
    "Verification",
    "canonical",
    "check_seal",
    "check_target",
    "dumps",
    "from_json",
    "item_to_json",
    "key_id",
    "load",
    "params_json",
    "plan_key",
    "save",
    "seal",
    "to_json",
    "verify",
]
