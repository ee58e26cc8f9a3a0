"""`dataclass`, as the standard library's, with its methods compiled when first used instead of when the class
is defined.

Python 3.11's `dataclasses.dataclass` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__` and,
when frozen, `__setattr__` and `__delattr__` as source text and compiles it when the class is defined. That is
about 1 ms per class, and c2gpu's first command defines 128 of them: 15% of its own CPU time, though most of
those methods never run. Here the standard decorator only collects the fields (so `fields`, `replace` and
`asdict` work as ever), and:
- `__eq__` and `__hash__` are the standard library's text, compiled on their first call, which then puts the
  compiled method in the class: from the second call on they are the standard ones;
- `__init__` binds its arguments plainly for a class's first PLAIN_INSTANCES instances, then is compiled the same
  way (the compiled one also takes any call that does not bind, so that Python raises its own error);
- `__repr__`, the ordering methods and the frozen guards, which run rarely, are plain functions giving the
  standard library's results (the same text, the same tuples compared, the same `FrozenInstanceError`).
Only the options c2gpu uses are accepted (frozen, eq, order), with the standard library's rules for an
explicit `__hash__`, for methods the class defines itself, and for frozen and non-frozen bases.
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import MISSING, FrozenInstanceError
from operator import attrgetter
from reprlib import recursive_repr

__all__ = ["dataclass"]

_collect_fields = dataclasses.dataclass


def dataclass(cls=None, /, *, frozen: bool = False, eq: bool = True, order: bool = False):
    def wrap(cls):
        return _process(cls, frozen, eq, order)
    return wrap if cls is None else wrap(cls)


def _process(cls, frozen: bool, eq: bool, order: bool):
    own = cls.__dict__
    class_hash = own.get("__hash__", MISSING)
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))
    for base in cls.__mro__[1:]:
        base_frozen = base.__dict__.get("__c2gpu_frozen__")
        if base_frozen is not None and base_frozen != frozen:
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one" if frozen
                            else "cannot inherit non-frozen dataclass from a frozen one")
    # the fields, their defaults as class attributes, __match_args__: nothing compiled.  A class without a
    # docstring gets one first, as the standard library gives it, but without parsing the text of the
    # signature that object.__init__ would have (inspect.signature: 0.3 ms)
    undocumented = not cls.__doc__
    if undocumented:
        cls.__doc__ = cls.__name__
    _collect_fields(cls, init=False, repr=False, eq=False, order=False, frozen=False)
    cls.__c2gpu_frozen__ = frozen
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__) or not all(f.init and not f.kw_only for f in fields):
        # the __init__ here passes every field, in order: no InitVar, ClassVar, init=False or kw_only
        raise TypeError(f"{cls.__qualname__}: c2gpu.records.dataclass takes plain fields only")
    if undocumented:
        cls.__doc__ = f"{cls.__name__}({', '.join(f'{f.name}: {f.type}' for f in fields)})"
    _check_defaults(fields)

    def add(name: str, fn, replace: bool = False) -> bool:
        if name in own and not replace:
            return False
        fn.__name__, fn.__qualname__ = name, f"{cls.__qualname__}.{name}"
        setattr(cls, name, fn)
        return True

    add("__init__", _plain_init(cls, fields, frozen, _on_first_call(cls, "__init__",
                                                                   lambda: _init_text(cls, fields, frozen))))
    add("__repr__", _repr([f.name for f in fields if f.repr]))
    compared = [f.name for f in fields if f.compare]
    if eq:
        add("__eq__", _on_first_call(cls, "__eq__", lambda: _eq_text(compared)))
    if order:
        for name, op in (("__lt__", operator.lt), ("__le__", operator.le), ("__gt__", operator.gt),
                         ("__ge__", operator.ge)):
            if not add(name, _order(compared, op)):
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}. "
                                "Consider using functools.total_ordering")
    if eq and not explicit_hash:
        if frozen:
            hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
            add("__hash__", _on_first_call(cls, "__hash__", lambda: _hash_text(hashed)), replace=True)
        else:
            cls.__hash__ = None
    if frozen:
        names = frozenset(f.name for f in fields)
        for name, fn in (("__setattr__", _frozen_setattr(cls, names)), ("__delattr__", _frozen_delattr(cls, names))):
            if not add(name, fn):
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    return cls


def _check_defaults(fields) -> None:
    seen_default = False
    for f in fields:
        if f.default is not MISSING or f.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _on_first_call(cls, name: str, text):
    """A method that compiles `text()` (its source and the names it uses), puts the result in `cls` in its own
    place and returns what the result returns."""
    def first_call(self, *args, **kwargs):
        source, namespace = text()
        exec(source, namespace)
        method = namespace[name]
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)
        return method(self, *args, **kwargs)
    return first_call


_HAS_DEFAULT_FACTORY = object()        # the default of a parameter whose field has a default_factory

# instances an __init__ makes before it is compiled: many classes have no more on a first command (48 of the 108
# that analyze testdata/matmul.c instantiates), and compiling the __init__ of every one was 3% of its CPU
PLAIN_INSTANCES = 8


def _plain_init(cls, fields, frozen: bool, compile_init):
    """An __init__ that binds its arguments by the fields' names, order and defaults, as the compiled one does,
    for the class's first PLAIN_INSTANCES instances; then, or for any call it does not bind plainly (a missing
    or unknown argument: the compiled one raises Python's own error), `compile_init` compiles the standard one
    and puts it in the class."""
    names = [f.name for f in fields]
    position = {n: k for k, n in enumerate(names)}
    made = 0

    def __init__(self, *args, **kwargs):
        nonlocal made
        made += 1
        values = _bind(fields, position, args, kwargs) if made <= PLAIN_INSTANCES else None
        if values is None:
            return compile_init(self, *args, **kwargs)
        for name, value in zip(names, values):
            if frozen:
                object.__setattr__(self, name, value)
            else:
                setattr(self, name, value)
        if hasattr(cls, "__post_init__"):
            self.__post_init__()
    return __init__


def _bind(fields, position: dict, args: tuple, kwargs: dict) -> list | None:
    """The fields' values for these arguments, defaults and factories filled in field order; None when the
    arguments do not bind (too many, repeated, unknown or missing), before any factory is called."""
    rest = fields[len(args):]
    if (len(args) > len(fields) or any(position.get(k, -1) < len(args) for k in kwargs)
            or any(f.name not in kwargs and f.default is MISSING and f.default_factory is MISSING for f in rest)):
        return None
    return [*args, *(kwargs[f.name] if f.name in kwargs else
                     f.default_factory() if f.default_factory is not MISSING else f.default for f in rest)]


def _init_text(cls, fields, frozen: bool):
    params, body = [], []
    namespace = {"__dataclass_HAS_DEFAULT_FACTORY__": _HAS_DEFAULT_FACTORY, "__dataclass_builtins_object__": object}
    for f in fields:
        value = f.name
        if f.default_factory is not MISSING:
            namespace[f"__dataclass_dflt_{f.name}__"] = f.default_factory
            params.append(f"{f.name}=__dataclass_HAS_DEFAULT_FACTORY__")
            value = f"__dataclass_dflt_{f.name}__() if {f.name} is __dataclass_HAS_DEFAULT_FACTORY__ else {f.name}"
        elif f.default is not MISSING:
            namespace[f"__dataclass_dflt_{f.name}__"] = f.default
            params.append(f"{f.name}=__dataclass_dflt_{f.name}__")
        else:
            params.append(f.name)
        body.append(f"__dataclass_builtins_object__.__setattr__(self, {f.name!r}, {value})" if frozen
                    else f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    return _function("__init__", ["self", *params], body), namespace


def _eq_text(names: list[str]):
    mine, theirs = _tuple_text("self", names), _tuple_text("other", names)
    return _function("__eq__", ["self", "other"], ["if other.__class__ is self.__class__:",
                                                   f"    return {mine} == {theirs}",
                                                   "return NotImplemented"]), {}


def _hash_text(names: list[str]):
    return _function("__hash__", ["self"], [f"return hash({_tuple_text('self', names)})"]), {}


def _tuple_text(obj: str, names: list[str]) -> str:
    return "(" + "".join(f"{obj}.{name}," for name in names) + ")"


def _function(name: str, params: list[str], body: list[str]) -> str:
    return f"def {name}({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body or ["pass"])


def _repr(names: list[str]):
    @recursive_repr()
    def __repr__(self):
        return (self.__class__.__qualname__ + "("
                + ", ".join(f"{name}={getattr(self, name)!r}" for name in names) + ")")
    return __repr__


def _order(names: list[str], op):
    key = attrgetter(*names) if len(names) >= 2 else (lambda obj: tuple(getattr(obj, n) for n in names))

    def compare(self, other):
        if other.__class__ is self.__class__:
            return op(key(self), key(other))
        return NotImplemented
    return compare


def _frozen_setattr(cls, names: frozenset):
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)
    return __setattr__


def _frozen_delattr(cls, names: frozenset):
    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)
    return __delattr__
