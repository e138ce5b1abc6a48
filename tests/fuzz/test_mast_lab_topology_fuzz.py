"""Arbitrary YAML documents and texts: the topology checker answers TopologyError or a topology,
never another exception."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from mast_lab.topology import TopologyError, parse_topology

pytestmark = pytest.mark.fuzz

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
names = st.sampled_from(["a", "b", "br", "c", "eth1", "a:eth1", "b:e", "host:x", ""])
docs = st.recursive(
    scalars | names,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "topology",
                    "nodes",
                    "links",
                    "endpoints",
                    "kind",
                    "image",
                    "binds",
                    "exec",
                    "env",
                    "labels",
                    "defaults",
                    "kinds",
                    "groups",
                    "a",
                    "b",
                    "linux",
                    "x",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(docs)
def test_documents(doc: object) -> None:
    text = yaml.safe_dump(doc)
    with contextlib.suppress(TopologyError):
        parse_topology(text, Path("/nonexistent/fuzz.clab.yml"))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_texts(text: str) -> None:
    with contextlib.suppress(TopologyError):
        parse_topology(text, Path("/nonexistent/fuzz.clab.yml"))
