"""Types of sctp_handover._native, the Rust extension (python/src/lib.rs,
python/src/options.rs). python/tests/test_python.py checks them against
the module (every public name, every signature) and mypy --strict."""

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union, final

__all__ = [
    "ANALYSIS_OPTIONS",
    "AnalysisOption",
    "ArrowTable",
    "TABLES",
    "__version__",
    "analyze_capture",
    "analyze_points",
    "check_options",
    "classify_found",
    "is_part",
    "list_inputs",
    "open_dataset",
    "part_key",
    "plan_inputs",
    "write_capture",
]

__version__: str
#: The tables, in the order `analyze --out` documents them.
TABLES: List[str]
#: The analysis options, in the order of `sctp-handover analyze --help`.
ANALYSIS_OPTIONS: Tuple["AnalysisOption", ...]

@final
class ArrowTable:
    """One table, exported through the Arrow PyCapsule interface."""

    @property
    def column_names(self) -> List[str]: ...
    def __len__(self) -> int: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

@final
class AnalysisOption:
    """One analysis option: keyword, command-line flag, kind, default, help."""

    @property
    def name(self) -> str: ...
    @property
    def flag(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def default(self) -> Union[bool, int, List[int], str, None]: ...
    @property
    def choices(self) -> List[str]: ...
    @property
    def metavar(self) -> Optional[str]: ...
    @property
    def help(self) -> str: ...

def analyze_capture(
    path: str,
    *,
    source: Optional[str] = None,
    stream: Optional[Any] = None,
    size: Optional[int] = None,
    modified_ns: Optional[int] = None,
    **options: Any,
) -> Dict[str, ArrowTable]: ...
def analyze_points(
    points: Dict[str, str],
    **options: Any,
) -> Dict[str, ArrowTable]: ...
def write_capture(
    path: str,
    out_root: str,
    *,
    source: Optional[str] = None,
    kind: str = "capture",
    reason: Optional[str] = None,
    params: Optional[Sequence[Sequence[str]]] = None,
    table_format: str = "parquet",
    parquet_compression: str = "snappy",
    force: bool = False,
    stream: Optional[Any] = None,
    size: Optional[int] = None,
    modified_ns: Optional[int] = None,
    **options: Any,
) -> Dict[str, Any]: ...
def list_inputs(
    paths: Sequence[str],
) -> Tuple[List[Dict[str, Any]], List[Tuple[str, str]], List[Tuple[str, str]]]: ...
def plan_inputs(
    entries: Sequence[Tuple[str, str, str, Optional[str], Optional[int], Optional[int]]],
) -> Tuple[List[Dict[str, Any]], List[Tuple[str, str]]]: ...
def classify_found(name: str, head: bytes) -> Optional[Tuple[str, Optional[str]]]: ...
def check_options(**options: Any) -> None: ...
def open_dataset(out_root: str, table_format: str = "parquet") -> None: ...
def part_key(source: str) -> str: ...
def is_part(path: str) -> bool: ...
