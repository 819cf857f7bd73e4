"""Stand-in for the Python reference's canonicalization, for `make bench-canon`.

The openai-agents package (SandboxSessionEvent, event_to_json_line) cannot be
installed on the benchmark machine, so this is a minimal pydantic 2 model
written from docs/format.md (fields, canonical line): the same fields, types, defaults and
phase-discriminated union, validated from JSON and written as
json.dumps(model_dump(mode="json"), separators=(",", ":"), sort_keys=True).
It is what a faithful reimplementation costs, not the package itself.

Reads event JSON lines on stdin, writes canonical lines on stdout; a line that
does not validate is reported on stderr and skipped (as `sandboxaudit canon`).
"""

import json
import os
import sys
import time
from datetime import datetime, timezone
from typing import Annotated, Any, Literal, Optional, Union
from uuid import UUID, uuid4

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

Op = Literal[
    "start", "stop", "exec", "read", "write", "shutdown", "running",
    "persist_workspace", "hydrate_workspace", "resolve_exposed_port",
    "materialize", "snapshot_persist", "snapshot_restore", "apply_patch",
]

ErrorCode = Literal[
    "invalid_manifest_path", "invalid_compression_scheme", "exposed_port_unavailable",
    "exec_nonzero", "exec_timeout", "exec_transport_error", "pty_session_not_found",
    "apply_patch_invalid_path", "apply_patch_invalid_diff", "apply_patch_file_not_found",
    "apply_patch_decode_error", "workspace_read_not_found", "workspace_archive_read_error",
    "workspace_archive_write_error", "workspace_write_type_error", "workspace_stop_error",
    "workspace_start_error", "workspace_root_not_found", "local_file_read_error",
    "local_dir_read_error", "local_checksum_error", "git_missing_in_image", "git_clone_error",
    "git_subpath_error", "git_copy_error", "mount_missing_tool", "mount_failed",
    "mount_config_invalid", "skills_config_invalid", "sandbox_config_invalid",
    "snapshot_persist_error", "snapshot_restore_error", "snapshot_not_restorable",
]


class _Event(BaseModel):
    version: int = 1
    event_id: UUID = Field(default_factory=uuid4)
    ts: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    session_id: UUID
    seq: int
    op: Op
    span_id: str
    parent_span_id: Optional[str] = None
    trace_id: Optional[str] = None
    data: dict[str, Any] = Field(default_factory=dict)


class StartEvent(_Event):
    phase: Literal["start"]


class FinishEvent(_Event):
    phase: Literal["finish"]
    ok: bool
    duration_ms: float
    error_code: Optional[ErrorCode] = None
    error_type: Optional[str] = None
    error_message: Optional[str] = None
    error_retryable: Optional[bool] = None
    stdout: Optional[str] = None
    stderr: Optional[str] = None


SandboxSessionEvent = TypeAdapter(
    Annotated[Union[StartEvent, FinishEvent], Field(discriminator="phase")]
)


def event_to_json_line(event: _Event) -> str:
    return json.dumps(event.model_dump(mode="json"), separators=(",", ":"), sort_keys=True) + "\n"


def main() -> int:
    out = sys.stdout
    bad = 0
    began = time.perf_counter()
    for num, line in enumerate(sys.stdin.buffer, 1):
        if not line.strip():
            continue
        try:
            event = SandboxSessionEvent.validate_json(line)
        except ValidationError as exc:
            bad += 1
            print(f"line {num}: {exc.errors()[0]['msg']}", file=sys.stderr)
            continue
        out.write(event_to_json_line(event))
    out.flush()
    if os.environ.get("BENCH_LOOP_TIME"):
        # The benchmark also compares against the loop alone, without the
        # interpreter's start and the imports.
        print(f"loop_seconds={time.perf_counter() - began:.6f}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
