"""VectorBackendContract: the behaviour every vector backend must show, as one pytest class.

A backend proves it meets :class:`~akgentic.vector.VectorBackend` by subclassing this
class in its test suite and giving a ``make_backend`` fixture: a callable
``(team_id, tenant=None) -> backend`` whose backends all share one fresh storage
(a new ``:memory:`` client, a temporary directory, a clean cluster prefix...)::

    class TestMyBackend(VectorBackendContract):
        @pytest.fixture
        def make_backend(self, tmp_path):
            storage = MyStorage(tmp_path)
            return lambda team_id, tenant=None: MyBackend(storage, team_id, tenant)

``team_id=None`` builds the admin (team-less) backend. Override :meth:`stored_ids`
when the backend does not offer ``stored_ids(collection)``; set
``supports_state = True`` for a backend whose rows live in actor state
(``get_state``/``restore_state``).
"""

from __future__ import annotations

import json
import math
import random
import threading
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

from akgentic.vector.param import VectorStoreParam
from akgentic.vector.protocol import VectorEntry, VectorQuery, row_object_id

__all__ = ["VectorBackendContract", "unit_vector"]

DIM = 8
TEAM_A = "team-a"
TEAM_B = "team-b"
HOSTILE = (
    "' OR 1=1 --",
    'say "hi"',
    "a\\b",
    "x*y?z",
    "$gt",
    '{"$ne": null}',
    "x" * 10_000,
)


def unit_vector(seed: int, dim: int = DIM) -> list[float]:
    """A deterministic random unit vector."""
    rng = random.Random(seed)
    values = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def entry(ref_id: str, seed: int, **fields: Any) -> VectorEntry:
    """A row whose vector is :func:`unit_vector` of ``seed``."""
    fields.setdefault("ref_type", "task")
    fields.setdefault("text", f"text of {ref_id}")
    return VectorEntry(ref_id=ref_id, vector=unit_vector(seed), **fields)


MakeBackend = Callable[..., Any]


class VectorBackendContract:
    """Subclass with a ``make_backend`` fixture; every test here must pass."""

    supports_state: ClassVar[bool] = False
    param: ClassVar[VectorStoreParam] = VectorStoreParam(backend="inmemory", dimension=DIM)

    @pytest.fixture
    def make_backend(self) -> MakeBackend:
        """``(team_id, tenant=None) -> backend`` over one fresh storage (override it)."""
        raise NotImplementedError("subclasses give a make_backend fixture")

    @pytest.fixture
    def backend(self, make_backend: MakeBackend) -> Any:
        """Team A's backend with ``planning`` (team-scoped) and ``workspace_chunks`` created."""
        backend = make_backend(TEAM_A)
        backend.create_collection("planning", self.param)
        backend.create_collection("workspace_chunks", self.param)
        return backend

    def stored_ids(self, backend: Any, collection: str) -> list[str]:
        """The ids the storage holds for ``collection`` (override when not offered)."""
        return list(backend.stored_ids(collection))

    # ----------------------------------------------------------- collections

    def test_create_collection_is_idempotent_and_another_dimension_raises(
        self, backend: Any
    ) -> None:
        backend.add("planning", [entry("1", 1)])
        backend.create_collection("planning", self.param)
        assert backend.count("planning") == 1
        with pytest.raises(ValueError):
            backend.create_collection("planning", self.param.model_copy(update={"dimension": 4}))

    def test_a_collection_that_was_never_created_raises(self, make_backend: MakeBackend) -> None:
        backend = make_backend(TEAM_A)
        with pytest.raises(ValueError):
            backend.add("nowhere", [entry("1", 1)])
        with pytest.raises(ValueError):
            backend.search("nowhere", unit_vector(1), 3)

    # ------------------------------------------------------------------ search

    def test_a_rows_own_vector_finds_it_first_with_scores_in_zero_one_sorted(
        self, backend: Any
    ) -> None:
        backend.add("planning", [entry(str(i), i) for i in range(20)])
        result = backend.search("planning", unit_vector(7), 20)
        scores = [hit.score for hit in result.hits]
        assert result.hits[0].ref_id == "7"
        assert result.hits[0].score == pytest.approx(1.0, abs=1e-4)
        assert all(0.0 <= s <= 1.0 for s in scores)
        assert scores == sorted(scores, reverse=True)

    def test_an_opposite_vector_scores_zero_not_negative(self, backend: Any) -> None:
        backend.add("planning", [entry("1", 1)])
        opposite = [-v for v in unit_vector(1)]
        hits = backend.search("planning", opposite, 5).hits
        assert [h.score for h in hits] == [0.0]

    def test_top_k_below_one_raises(self, backend: Any) -> None:
        backend.add("planning", [entry("1", 1)])
        for bad in (0, -1):
            with pytest.raises(ValueError):
                backend.search("planning", unit_vector(1), bad)

    def test_predicates_apply_before_the_top_k_cut(self, backend: Any) -> None:
        rows = [entry(str(i), 100, scope="near") for i in range(10)]
        rows.append(entry("far", 5, scope="wanted", path="docs/a.md"))
        backend.add("planning", rows)
        hits = backend.search("planning", unit_vector(100), 1, scope="wanted").hits
        assert [h.ref_id for h in hits] == ["far"]
        hits = backend.search("planning", unit_vector(100), 1, path_prefix="docs/").hits
        assert [h.ref_id for h in hits] == ["far"]
        query = VectorQuery(filters={"ref_id": "far"})
        hits = backend.search("planning", unit_vector(100), 1, query=query).hits
        assert [h.ref_id for h in hits] == ["far"]

    def test_a_score_threshold_drops_weaker_hits(self, backend: Any) -> None:
        backend.add("planning", [entry("same", 1), entry("other", 2)])
        query = VectorQuery(score_threshold=0.999)
        hits = backend.search("planning", unit_vector(1), 5, query=query).hits
        assert [h.ref_id for h in hits] == ["same"]

    def test_filters_on_team_or_unknown_keys_raise(self, backend: Any) -> None:
        backend.add("planning", [entry("1", 1)])
        for key in ("team_id", "tenant", "vector", "__class__", "nope"):
            with pytest.raises(ValueError):
                backend.search("planning", unit_vector(1), 3, query=VectorQuery(filters={key: "x"}))

    def test_a_list_filter_means_any_of_and_hostile_values_match_literally(
        self, backend: Any
    ) -> None:
        rows = [entry("task", 1, ref_type="task"), entry("ent", 2, ref_type="entity")]
        rows += [entry(f"h{i}", 10 + i, ref_type=value) for i, value in enumerate(HOSTILE)]
        backend.add("planning", rows)
        any_of = VectorQuery(filters={"ref_type": ["task", "entity"]})
        hits = backend.search("planning", unit_vector(1), 50, query=any_of).hits
        assert {h.ref_id for h in hits} == {"task", "ent"}
        for i, value in enumerate(HOSTILE):
            query = VectorQuery(filters={"ref_type": value})
            hits = backend.search("planning", unit_vector(1), 50, query=query).hits
            assert [h.ref_id for h in hits] == [f"h{i}"], value[:40]
        nothing = VectorQuery(filters={"ref_type": "' OR 1=1"})
        assert backend.search("planning", unit_vector(1), 50, query=nothing).hits == []

    def test_hostile_filter_keys_raise_before_any_row_is_read(self, backend: Any) -> None:
        backend.add("planning", [entry("1", 1)])
        keys = (
            'ref_type" OR "1"="1',
            "ref_type; DROP TABLE planning",
            "$where",
            "text*",
            "Ref_Type",
            "path.__len__",
            "k" * 10_000,
        )
        for key in keys:
            with pytest.raises(ValueError):
                backend.search("planning", unit_vector(1), 3, query=VectorQuery(filters={key: "x"}))

    @pytest.mark.parametrize("field", ["ref_id", "text", "scope", "path"])
    def test_hostile_values_match_literally_on_every_text_field(
        self, backend: Any, field: str
    ) -> None:
        # One row per hostile value in ``field``, plus a decoy that every pattern or
        # injection reading of those values would also match.
        values = [*HOSTILE, "%", "_", ".*", "a.b"]
        names = values if field == "ref_id" else [f"r{i}" for i in range(len(values))]

        def row(name: str, seed: int, value: str) -> VectorEntry:
            fields = {} if field == "ref_id" else {field: value}
            return entry(name, seed, **fields)

        rows = [row(name, 10 + i, v) for i, (name, v) in enumerate(zip(names, values, strict=True))]
        rows.append(row("axb", 99, "axb"))
        backend.add("planning", rows)
        for name, value in zip(names, values, strict=True):
            hits = backend.search(
                "planning", unit_vector(1), 50, query=VectorQuery(filters={field: value})
            ).hits
            assert [h.ref_id for h in hits] == [name], value[:40]
            assert getattr(hits[0], field) == value
            if field == "scope":
                hits = backend.search("planning", unit_vector(1), 50, scope=value).hits
                assert [h.ref_id for h in hits] == [name], value[:40]

    def test_a_path_prefix_is_a_literal_prefix(self, backend: Any) -> None:
        paths = ["a.b/x", "axb/x", "%/y", "' OR 1=1 --/z", "_/w", "q" * 10_000 + "/v"]
        backend.add("planning", [entry(f"p{i}", i, path=p) for i, p in enumerate(paths)])
        for prefix, expected in (
            ("a.", {"p0"}),
            ("%", {"p2"}),
            ("' OR 1=1", {"p3"}),
            ("_", {"p4"}),
            ("q" * 10_000, {"p5"}),
            ('"', set()),
        ):
            hits = backend.search("planning", unit_vector(1), 50, path_prefix=prefix).hits
            assert {h.ref_id for h in hits} == expected, prefix[:40]
        backend.remove("planning", ["p0", "p1", "p2"], path_prefix="a.")
        left = {h.ref_id for h in backend.search("planning", unit_vector(1), 50).hits}
        assert left == {"p1", "p2", "p3", "p4", "p5"}

    def test_hostile_ref_ids_are_removed_literally(self, backend: Any) -> None:
        ids = [*HOSTILE, "*", "%"]
        backend.add("planning", [entry(ref_id, i) for i, ref_id in enumerate(ids)])
        backend.remove("planning", ["' OR 1=1 --", "*", "x" * 9_999])
        left = {h.ref_id for h in backend.search("planning", unit_vector(1), 50).hits}
        assert left == set(ids) - {"' OR 1=1 --", "*"}

    @pytest.mark.parametrize(
        "vector",
        [[], [1.0] * (DIM - 1), [0.0] * DIM, [float("inf")] + [1.0] * (DIM - 1)],
        ids=["empty", "wrong-width", "zero", "inf"],
    )
    def test_an_empty_or_unusable_query_vector_raises(
        self, backend: Any, vector: list[float]
    ) -> None:
        backend.add("planning", [entry("1", 1)])
        with pytest.raises(ValueError):
            backend.search("planning", vector, 3)

    def test_an_empty_batch_and_an_empty_remove_change_nothing(self, backend: Any) -> None:
        backend.add("planning", [entry("1", 1)])
        backend.add("planning", [])
        backend.remove("planning", [])
        assert backend.count("planning") == 1

    def test_wildcards_in_a_path_prefix_raise(self, backend: Any) -> None:
        backend.add("planning", [entry("1", 1, path="a*b")])
        for prefix in ("a*", "a?"):
            with pytest.raises(ValueError):
                backend.search("planning", unit_vector(1), 3, path_prefix=prefix)
            with pytest.raises(ValueError):
                backend.remove("planning", ["1"], path_prefix=prefix)

    def test_a_shared_collection_needs_a_scope_for_search_and_remove(self, backend: Any) -> None:
        backend.add("workspace_chunks", [entry("c1", 1, scope="ws-1", ref_type="chunk")])
        with pytest.raises(ValueError, match="shared across teams"):
            backend.search("workspace_chunks", unit_vector(1), 3)
        with pytest.raises(ValueError, match="shared across teams"):
            backend.remove("workspace_chunks", ["c1"])
        hits = backend.search("workspace_chunks", unit_vector(1), 3, scope="ws-1").hits
        assert [h.ref_id for h in hits] == ["c1"]
        assert hits[0].scope == "ws-1"

    # ------------------------------------------------------------------ writes

    def test_re_adding_a_ref_id_replaces_the_row(self, backend: Any) -> None:
        backend.add("planning", [entry("1", 1, text="old"), entry("2", 2)])
        backend.add("planning", [entry("1", 3, text="new")])
        assert backend.count("planning") == 2
        hits = backend.search("planning", unit_vector(3), 1).hits
        assert (hits[0].ref_id, hits[0].text) == ("1", "new")
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)

    def test_the_last_duplicate_of_a_batch_wins(self, backend: Any) -> None:
        backend.add("planning", [entry("1", 1, text="first"), entry("1", 2, text="last")])
        assert backend.count("planning") == 1
        assert backend.search("planning", unit_vector(2), 1).hits[0].text == "last"

    @pytest.mark.parametrize(
        "vector",
        [[], [1.0] * (DIM - 1), [0.0] * DIM, [float("nan")] + [1.0] * (DIM - 1)],
        ids=["empty", "wrong-width", "zero", "nan"],
    )
    def test_bad_vectors_raise_and_nothing_of_the_batch_is_written(
        self, backend: Any, vector: list[float]
    ) -> None:
        bad = VectorEntry(ref_type="task", ref_id="bad", text="bad", vector=vector)
        with pytest.raises(ValueError):
            backend.add("planning", [entry("good", 1), bad])
        assert backend.count("planning") == 0

    def test_remove_takes_only_listed_ids_and_honours_scope_and_prefix(self, backend: Any) -> None:
        backend.add(
            "planning",
            [
                entry("1", 1, scope="s1", path="docs/a"),
                entry("2", 2, scope="s2", path="docs/b"),
                entry("3", 3, scope="s1", path="src/c"),
                entry("4", 4),
            ],
        )
        backend.remove("planning", ["1", "2", "3", "unknown"], scope="s1", path_prefix="docs/")
        left = {h.ref_id for h in backend.search("planning", unit_vector(1), 10).hits}
        assert left == {"2", "3", "4"}
        backend.remove("planning", ["4", "missing"])
        assert backend.count("planning") == 2

    def test_a_megabyte_of_unicode_text_and_ids_round_trip(self, backend: Any) -> None:
        text = "Straße 🚀 مرحبا e\u0301 " + "z" * 1_000_000
        backend.add("planning", [entry("идентификатор-🚀", 1, text=text)])
        hit = backend.search("planning", unit_vector(1), 1).hits[0]
        assert (hit.ref_id, hit.text) == ("идентификатор-🚀", text)

    # ------------------------------------------------------------------- teams

    def test_two_teams_with_equal_ref_ids_are_isolated(
        self, backend: Any, make_backend: MakeBackend
    ) -> None:
        other = make_backend(TEAM_B)
        other.create_collection("planning", self.param)
        backend.add("planning", [entry("3", 1, text="mine")])
        other.add("planning", [entry("3", 1, text="theirs")])
        assert [h.text for h in backend.search("planning", unit_vector(1), 5).hits] == ["mine"]
        other.add("planning", [entry("3", 2, text="theirs again")])
        assert [h.text for h in backend.search("planning", unit_vector(1), 5).hits] == ["mine"]
        backend.remove("planning", ["3"])
        assert backend.count("planning") == 0
        assert other.count("planning") == 1

    def test_a_shared_collection_row_belongs_to_no_team(
        self, backend: Any, make_backend: MakeBackend
    ) -> None:
        # Rows of a shared collection are written with team "": one row per ref_id
        # whichever team wrote it, seen and removable by every team within its scope.
        other = make_backend(TEAM_B)
        other.create_collection("workspace_chunks", self.param)
        backend.add("workspace_chunks", [entry("c1", 1, scope="s", text="first")])
        other.add("workspace_chunks", [entry("c1", 1, scope="s", text="second")])
        hits = backend.search("workspace_chunks", unit_vector(1), 5, scope="s").hits
        assert [h.text for h in hits] == ["second"]
        other.remove("workspace_chunks", ["c1"], scope="s")
        assert backend.search("workspace_chunks", unit_vector(1), 5, scope="s").hits == []

    def test_a_team_less_backend_cannot_search_team_scoped_rows(
        self, backend: Any, make_backend: MakeBackend
    ) -> None:
        backend.add("planning", [entry("1", 1)])
        admin = make_backend(None)
        admin.create_collection("planning", self.param)
        with pytest.raises(ValueError):
            admin.search("planning", unit_vector(1), 3)
        with pytest.raises(ValueError):
            admin.remove("planning", ["1"])

    def test_stored_ids_are_row_object_ids(self, backend: Any) -> None:
        backend.add("planning", [entry("42", 1)])
        backend.add("workspace_chunks", [entry("42", 1, scope="ws")])
        assert self.stored_ids(backend, "planning") == [
            row_object_id("planning", TEAM_A, None, "42")
        ]
        assert self.stored_ids(backend, "workspace_chunks") == [
            row_object_id("workspace_chunks", None, None, "42")
        ]

    # ------------------------------------------------------------------- admin

    def test_admin_lists_collections_and_deletes_one_teams_rows(
        self, backend: Any, make_backend: MakeBackend
    ) -> None:
        other = make_backend(TEAM_B)
        other.create_collection("planning", self.param)
        other.create_collection("notes", self.param)
        backend.add("planning", [entry("1", 1), entry("2", 2)])
        other.add("planning", [entry("1", 1)])
        admin = make_backend(None)
        assert {"planning", "notes", "workspace_chunks"} <= {
            c.casefold() for c in admin.list_collections()
        }
        assert admin.delete_by_team("planning", TEAM_A) == 2
        assert backend.count("planning") == 0
        assert other.count("planning") == 1
        for shared in ("workspace_chunks", "Workspace_chunks", "WORKSPACE_CHUNKS"):
            with pytest.raises(ValueError):
                admin.delete_by_team(shared, TEAM_A)
        with pytest.raises(ValueError):
            admin.delete_by_team("never_created", TEAM_A)

    # ------------------------------------------------------------- concurrency

    def test_threads_upserting_one_ref_id_leave_one_row(self, backend: Any) -> None:
        texts = [f"writer {i}" for i in range(8)]
        errors: list[BaseException] = []

        def write(i: int) -> None:
            try:
                for _ in range(5):
                    backend.add("planning", [entry("7", i, text=texts[i])])
            except BaseException as exc:  # reported below; a thread cannot raise to the test
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        assert backend.count("planning") == 1
        assert backend.search("planning", unit_vector(0), 1).hits[0].text in texts

    def test_concurrent_distinct_adds_all_land(self, backend: Any) -> None:
        errors: list[BaseException] = []

        def write(worker: int) -> None:
            try:
                for i in range(25):
                    backend.add("planning", [entry(f"{worker}-{i}", worker * 100 + i)])
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        assert backend.count("planning") == 100

    # ------------------------------------------------------------------- state

    def test_state_survives_json_and_the_list_of_floats_form_loads(
        self, backend: Any, make_backend: MakeBackend
    ) -> None:
        if not self.supports_state:
            pytest.skip("this backend keeps no actor state (its rows live in its own storage)")
        backend.add("planning", [entry("1", 1, text="ünï"), entry("2", 2)])
        state = json.loads(json.dumps(backend.get_state()))
        fresh = make_backend(TEAM_A)
        fresh.restore_state(state)
        assert [h.ref_id for h in fresh.search("planning", unit_vector(2), 2).hits] == ["2", "1"]
        legacy = {
            "collections": {
                "planning": {
                    "dimension": DIM,
                    "rows": [
                        {"ref_type": "task", "ref_id": "9", "text": "old", "vector": unit_vector(9)}
                    ],
                }
            }
        }
        older = make_backend(TEAM_A)
        older.restore_state(legacy)
        hit = older.search("planning", unit_vector(9), 1).hits[0]
        assert (hit.ref_id, hit.text) == ("9", "old")
