"""c2gpu.records.dataclass behaves as the standard library's dataclass: each class here is defined with both and
every method's result is compared, before and after the lazily compiled methods have replaced themselves."""
from __future__ import annotations

import copy
import dataclasses
import pickle
import typing
from dataclasses import FrozenInstanceError, field

import pytest

from c2gpu import records


def define(decorator):
    """The same classes, defined with `decorator`."""
    @decorator(frozen=True, order=True)
    class Loc:
        file: str
        line: int
        col: int = 0

    @decorator(frozen=True)
    class One:
        terms: tuple = ()

    @decorator(frozen=True)
    class Empty:
        pass

    @decorator(frozen=True)
    class Node:
        name: str
        kids: tuple = ()
        tags: frozenset = field(default_factory=frozenset)
        ast: object = field(default=None, compare=False, repr=False, hash=False)
        weight: float = field(default=1.0, hash=False)

    @decorator(frozen=True)
    class Leaf(Node):
        value: int = 0

    @decorator
    class Mutable:
        items: list = field(default_factory=list)
        count: int = 0

        def __post_init__(self):
            self.count = len(self.items)

    @decorator(eq=False)
    class Identity:
        x: int = 0

    @decorator(frozen=True)
    class OwnHash:
        x: int

        def __hash__(self):
            return 7

    @decorator
    class OwnEq:
        x: int

        def __eq__(self, other):
            return True

    @decorator
    class Cycle:
        me: object = None

    return dict(Loc=Loc, One=One, Empty=Empty, Node=Node, Leaf=Leaf, Mutable=Mutable, Identity=Identity,
                OwnHash=OwnHash, OwnEq=OwnEq, Cycle=Cycle)


OURS = define(records.dataclass)
EXAMPLES = {
    "Loc": [("a.c", 3, 4), ("a.c", 3), ("b.c", 1, 9)],
    "One": [((("x", 1),),), ()],
    "Empty": [()],
    "Node": [("n",), ("n", (1, 2), frozenset({3}), "ast", 2.0), ("n", (), frozenset(), None, float("nan"))],
    "Leaf": [("l", (), frozenset(), None, 1.0, 5), ("l",)],
    "Mutable": [([1, 2],), ()],
    "Identity": [(3,)],
    "OwnHash": [(1,)],
    "OwnEq": [(1,)],
    "Cycle": [()],
}


def observe(decorator, name, args):
    """What one can see of the class and of two equal instances: results, or the exceptions raised.  Each call
    with arguments that do not bind gets a class of its own (its first instance, made the plain way, when
    PLAIN_INSTANCES allows)."""
    cls = define(decorator)[name]

    def fresh():
        return define(decorator)[name]
    a, b = cls(*args), cls(*args)
    if name == "Cycle":
        a.me = a

    def attempt(fn):
        try:
            return ("ok", fn())
        except Exception as e:                  # noqa: BLE001 (the exception is what is compared)
            return (type(e).__name__, str(e))
    seen = {
        "fields": [(f.name, f.compare, f.hash, f.repr) for f in dataclasses.fields(cls)],
        "match_args": getattr(cls, "__match_args__", None),
        "hash is None": cls.__hash__ is None,
    }
    for _ in range(2):                          # before and after the methods compiled themselves
        seen.setdefault("repr", []).append(repr(a))
        seen.setdefault("eq", []).append((a == b, a != b, a == 1, a.__eq__(1)))
        seen.setdefault("hash", []).append(attempt(lambda: hash(a) == hash(b)) if cls.__hash__ else None)
        by_value = cls.__hash__ not in (None, object.__hash__)           # not hashed by identity
        seen.setdefault("hash value", []).append(attempt(lambda: hash(a)) if by_value else None)
        seen.setdefault("set", []).append(attempt(lambda: len({a, b})) if cls.__hash__ else None)
    seen["order"] = attempt(lambda: (a < b, a <= b, a > b, a >= b, sorted([cls(*args), a]) == [a, a]))
    seen["setattr"] = attempt(lambda: setattr(a, dataclasses.fields(cls)[0].name if dataclasses.fields(cls) else "z", 1))
    seen["delattr"] = attempt(lambda: delattr(b, "other"))
    seen["vars"] = attempt(lambda: sorted(vars(cls(*args)).items(), key=repr))
    seen["replace"] = attempt(lambda: repr(dataclasses.replace(cls(*args))))
    seen["asdict"] = attempt(lambda: dataclasses.asdict(cls(*args)) if name != "Cycle" else None)
    seen["pickle"] = attempt(lambda: repr(pickle.loads(pickle.dumps(cls(*args)))) if name != "Cycle" else None)
    seen["deepcopy"] = attempt(lambda: repr(copy.deepcopy(cls(*args))) == repr(cls(*args)))
    seen["bad arguments"] = attempt(lambda: fresh()(1, 2, 3, 4, 5, 6, 7))
    first = dataclasses.fields(cls)[0].name if dataclasses.fields(cls) else "z"
    seen["repeated argument"] = attempt(lambda: fresh()(*args, **{first: 1}) if args else None)
    seen["unknown keyword"] = attempt(lambda: fresh()(*args, bogus=1))
    seen["by keyword"] = attempt(lambda: repr(fresh()(**dict(zip([f.name for f in dataclasses.fields(cls)], args)))))
    seen["missing argument"] = attempt(lambda: fresh()() if name in ("Loc", "Node", "OwnHash") else None)
    return seen


CASES = [(name, args) for name, examples in EXAMPLES.items() for args in examples]


@pytest.mark.parametrize("plain", [0, 1000], ids=["compiled __init__", "plain __init__"])
@pytest.mark.parametrize("name,args", CASES, ids=[f"{n}{a!r}" for n, a in CASES])
def test_same_as_the_standard_dataclass(name, args, plain, monkeypatch):
    """Through the compiled __init__ from the first instance, and through the plain one (PLAIN_INSTANCES) for
    every instance: the bad calls too, which the plain one hands to the compiled one."""
    monkeypatch.setattr(records, "PLAIN_INSTANCES", plain)
    std, ours = observe(dataclasses.dataclass, name, args), observe(records.dataclass, name, args)
    assert ours == std


def test_order_across_classes_is_not_implemented():
    with pytest.raises(TypeError):
        OURS["Loc"]("a", 1) < OURS["One"]()


def test_frozen_instance_error():
    node = OURS["Node"]("n")
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'name'"):
        node.name = "m"
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'kids'"):
        del node.kids


def test_the_standard_library_rules_on_definitions():
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        @records.dataclass
        class Bad:
            a: int = 0
            b: int
    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):
        @records.dataclass
        class Thawed(OURS["Node"]):
            extra: int = 0
    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):
        @records.dataclass(frozen=True)
        class Guarded:
            a: int

            def __setattr__(self, name, value):
                pass
    with pytest.raises(TypeError, match="Cannot overwrite attribute __lt__"):
        @records.dataclass(order=True)
        class Ordered:
            a: int

            def __lt__(self, other):
                return True


@pytest.mark.parametrize("extra", ["x: int = dataclasses.field(default=0, init=False)",
                                   "x: dataclasses.InitVar[int] = 0", "x: typing.ClassVar[int] = 0",
                                   "x: int = dataclasses.field(default=0, kw_only=True)"])
def test_fields_the_plain_init_cannot_pass_are_refused(extra):
    namespace = {"dataclasses": dataclasses, "typing": typing}
    source = f"class Unsupported:\n    a: int = 0\n    {extra}\n"
    exec(compile(source, "<test>", "exec", dont_inherit=True), namespace)   # annotations as objects
    with pytest.raises(TypeError, match="plain fields only"):
        records.dataclass(namespace["Unsupported"])


def test_methods_are_compiled_once_and_then_are_the_class_own():
    cls = define(records.dataclass)["Node"]
    first = cls.__dict__["__init__"]
    plain = [cls("n", (k,)) for k in range(records.PLAIN_INSTANCES)]
    assert cls.__dict__["__init__"] is first                  # not compiled yet
    cls("n")
    compiled = cls.__dict__["__init__"]
    assert compiled is not first and compiled.__qualname__.endswith("Node.__init__")
    cls("m")
    assert cls.__dict__["__init__"] is compiled
    assert plain == [cls("n", (k,)) for k in range(records.PLAIN_INSTANCES)]
