//! What to say when no overload of a call matches its arguments: cel-go only says "found no
//! matching overload"; here the message names the operator or function, the types it was
//! given, and what to write instead (`write 8.0`, `double(vcpus) * 1.5`).

use cel::common::ast::{Expr, IdedExpr, LiteralValue, operators};

use super::decls::{DATE_ACCESSORS, TIME_ACCESSORS};
use super::types::{Ty, a};
use crate::instance_types::kubelet_cel::field::Problem;

/// An identifier or a literal as written, for a suggestion; `…` for anything longer.
pub fn shown(e: &IdedExpr) -> String {
    match &e.expr {
        Expr::Ident(name) => name.clone(),
        Expr::Literal(LiteralValue::Int(i)) => i.inner().to_string(),
        Expr::Literal(LiteralValue::Double(d)) => format!("{:?}", d.inner()),
        Expr::Select(s) if !s.test => format!("{}.{}", shown(&s.operand), s.field),
        _ => "…".to_string(),
    }
}

/// The symbol of an operator, for messages.
pub fn symbol(function: &str) -> &str {
    match function {
        operators::IN => "in",
        operators::NEGATE => "-",
        operators::LOGICAL_NOT => "!",
        other => other.trim_matches('_'),
    }
}

/// Why no overload of `function` takes `types` (substituted, unbound parameters as `dyn`),
/// written as `exprs` (the receiver first for a method), and what to write instead.
pub fn no_overload(function: &str, member: bool, types: &[Ty], exprs: &[&IdedExpr]) -> Problem {
    let text = match (function, types) {
        (operators::CONDITIONAL, [cond, yes, no]) => conditional(cond, yes, no),
        (operators::LOGICAL_NOT | operators::NOT_STRICTLY_FALSE, [t]) => {
            format!(
                "`!` negates a bool, not {}: compare first, e.g. `!(vcpus > 4)`",
                a(t)
            )
        }
        (operators::NEGATE, [t]) => format!("unary `-` applies to an int or a double, not {}", a(t)),
        (
            operators::ADD
            | operators::SUBSTRACT
            | operators::MULTIPLY
            | operators::DIVIDE
            | operators::MODULO,
            [l, r],
        ) => arithmetic(function, l, r, exprs),
        (operators::EQUALS | operators::NOT_EQUALS, [l, r]) => one_type(symbol(function), l, r, exprs, ""),
        (
            operators::LESS | operators::LESS_EQUALS | operators::GREATER | operators::GREATER_EQUALS,
            [l, r],
        ) => ordering(symbol(function), l, r, exprs),
        (operators::INDEX, [container, index]) => indexing(container, index),
        (operators::IN, [element, container]) => membership(element, container),
        ("max" | "min", [l, r]) => min_max(function, l, r),
        ("size", [t]) => format!("size() measures a string, bytes, a list or a map, not {}", a(t)),
        ("contains" | "startsWith" | "endsWith" | "matches", [on, arg]) => {
            let t = if matches!(on, Ty::String | Ty::Dyn) {
                arg
            } else {
                on
            };
            format!("{function}() works on strings, not on {}", a(t))
        }
        ("duration", [t]) => format!(
            "duration() takes a string such as '1h' (or a duration), not {}: CEL's standard library has no duration of a number",
            a(t)
        ),
        (name, [t]) if !member && is_conversion(name) => format!(
            "{name}() does not take {}{}",
            a(t),
            match name {
                "int" | "double" => ": it converts an int, a uint, a double or a string",
                _ => "",
            }
        ),
        (name, [on, ..]) if DATE_ACCESSORS.contains(&name) || TIME_ACCESSORS.contains(&name) => {
            accessor(name, on, &types[1..])
        }
        _ => format!(
            "no overload of {function}() takes ({})",
            types.iter().map(Ty::name).collect::<Vec<_>>().join(", ")
        ),
    };
    Problem::Type(text)
}

/// A call of a declared function in a style or with a number of arguments it has no overload
/// for: a method called as a function or the reverse, or the wrong count (`int(1, 2)`).
/// `arities` are the argument counts (the receiver not counted) its overloads of this style take.
pub fn wrong_shape(name: &str, member: bool, given: usize, arities: &[usize]) -> Problem {
    Problem::Type(match (arities, member) {
        ([], true) => format!("{name}() is a function, not a method: call it as `{name}(…)`"),
        ([], false) => {
            format!("{name}() is a method: call it on its first argument, e.g. `instance_type.{name}('m5')`")
        }
        (counts, _) => {
            let counts: Vec<String> = counts.iter().map(usize::to_string).collect();
            format!(
                "{name}() takes {} argument{}, here {given}",
                counts.join(" or "),
                if counts == ["1"] { "" } else { "s" }
            )
        }
    })
}

fn is_conversion(name: &str) -> bool {
    matches!(
        name,
        "int" | "uint" | "double" | "string" | "bool" | "bytes" | "timestamp"
    )
}

fn conditional(cond: &Ty, yes: &Ty, no: &Ty) -> String {
    if !matches!(cond, Ty::Bool | Ty::Dyn) {
        return format!(
            "the condition of `?:` must be a bool, not {}: compare, e.g. `vcpus > 4 ? … : …`",
            a(cond)
        );
    }
    let hint = match (yes, no) {
        (Ty::Int, Ty::Double) | (Ty::Double, Ty::Int) => {
            ": CEL converts nothing implicitly, so wrap the int one in double() or the double one in int()"
        }
        (Ty::Null, _) | (_, Ty::Null) => ": CEL has no null number; give both branches a number, e.g. `0`",
        _ => ": make both the same type",
    };
    format!(
        "the two branches of `?:` have different types, {} and {}{hint}",
        yes.name(),
        no.name()
    )
}

/// Whether some overload of the arithmetic operator takes a `t` at all.
fn arithmetic_takes(function: &str, t: &Ty) -> bool {
    match function {
        operators::ADD => matches!(
            t,
            Ty::Int
                | Ty::Uint
                | Ty::Double
                | Ty::String
                | Ty::Bytes
                | Ty::List(_)
                | Ty::Duration
                | Ty::Timestamp
                | Ty::Dyn
        ),
        operators::SUBSTRACT => t.numeric() || matches!(t, Ty::Duration | Ty::Timestamp | Ty::Dyn),
        operators::MODULO => matches!(t, Ty::Int | Ty::Uint | Ty::Dyn),
        _ => t.numeric() || *t == Ty::Dyn,
    }
}

fn arithmetic(function: &str, l: &Ty, r: &Ty, exprs: &[&IdedExpr]) -> String {
    let op = symbol(function);
    for t in [l, r] {
        if !arithmetic_takes(function, t) {
            let hint = if function == operators::MODULO && *t == Ty::Double {
                ": `%` is for ints; convert with int() first"
            } else {
                ""
            };
            return format!("`{op}` does not apply to {}{hint}", a(t));
        }
    }
    let said = format!("`{op}` of {} and {}: CEL converts nothing implicitly", a(l), a(r));
    let (left, right) = sides(exprs);
    match (l, r) {
        (Ty::Int, Ty::Double) => format!(
            "{said}: write `double({left}) {op} {right}` (a double result is truncated to an integer), or keep to ints, e.g. `{left} * 3 / 2` for 1.5 times"
        ),
        (Ty::Double, Ty::Int) => format!(
            "{said}: write `{left} {op} double({right})` (a double result is truncated to an integer), or keep to ints"
        ),
        (Ty::Uint, _) | (_, Ty::Uint) => {
            format!("{said}: convert the uint with int(), or write the literal without `u`")
        }
        (Ty::List(_), Ty::List(_)) => format!("{said}: only lists of one element type are joined"),
        _ => format!("{said}: convert one side"),
    }
}

/// The two operands as written.
fn sides(exprs: &[&IdedExpr]) -> (String, String) {
    match exprs {
        [x, y] => (shown(x), shown(y)),
        _ => ("…".to_string(), "…".to_string()),
    }
}

/// A double literal's whole value as an int literal (`2.0` → `2`), when it has one.
fn whole(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Literal(LiteralValue::Double(d)) => {
            let d = *d.inner();
            (d.fract() == 0.0 && d.abs() < 1e15).then(|| format!("{}", d as i64))
        }
        _ => None,
    }
}

/// An int literal as a double literal (`8` → `8.0`).
fn as_double(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Literal(LiteralValue::Int(i)) => Some(format!("{}.0", i.inner())),
        _ => None,
    }
}

/// A type in a comparison: `null` as it is written.
fn compared(t: &Ty) -> String {
    match t {
        Ty::Null => "null".to_string(),
        other => a(other),
    }
}

/// `==`/`!=` (and the ordering operators, with `aside`) of two types that are not one: what
/// to write.
fn one_type(op: &str, l: &Ty, r: &Ty, exprs: &[&IdedExpr], aside: &str) -> String {
    let said = format!(
        "`{op}` compares {} with {}, and CEL compares only values of one type{aside}",
        compared(l),
        compared(r)
    );
    let (left, right) = sides(exprs);
    let literal = |i: usize, f: fn(&IdedExpr) -> Option<String>| exprs.get(i).and_then(|e| f(e));
    match (l, r) {
        (Ty::Null, other) | (other, Ty::Null) => format!(
            "{said}: {} is never null (only durations and timestamps compare with null): remove the comparison",
            a(other)
        ),
        (Ty::Double, Ty::Int) => match literal(1, as_double) {
            Some(d) => {
                format!("{said}: compare a double with a double: write `{d}`, or `int({left}) {op} {right}`")
            }
            None => format!("{said}: write `{left} {op} double({right})`, or `int({left}) {op} {right}`"),
        },
        (Ty::Int, Ty::Double) => match (literal(0, as_double), literal(1, whole)) {
            (Some(d), _) => {
                format!("{said}: compare a double with a double: write `{d}`, or `{left} {op} int({right})`")
            }
            (None, Some(i)) => {
                format!("{said}: compare an int with an int: write `{i}`, or `double({left}) {op} {right}`")
            }
            (None, None) => format!("{said}: write `double({left}) {op} {right}`"),
        },
        (Ty::Uint, _) | (_, Ty::Uint) => {
            format!("{said}: convert the uint with int(), or write the literal without `u`")
        }
        _ => format!("{said}: convert one side, e.g. with int(), double() or string()"),
    }
}

fn ordering(op: &str, l: &Ty, r: &Ty, exprs: &[&IdedExpr]) -> String {
    let orderable = |t: &Ty| {
        t.numeric()
            || matches!(
                t,
                Ty::Bool | Ty::String | Ty::Bytes | Ty::Duration | Ty::Timestamp | Ty::Dyn
            )
    };
    match [l, r].into_iter().find(|t| !orderable(t)) {
        Some(t) => format!("`{op}` does not order {}", a(t)),
        None if l.numeric() && r.numeric() => one_type(
            op,
            l,
            r,
            exprs,
            " (Karpenter's environment does not turn on CEL's cross-type numeric comparisons)",
        ),
        None => one_type(op, l, r, exprs, ""),
    }
}

fn indexing(container: &Ty, index: &Ty) -> String {
    match container {
        Ty::List(_) => format!("a list is indexed by an int, not by {}", a(index)),
        Ty::Map(key, _) => format!("{} is looked up by {}, not by {}", a(container), a(key), a(index)),
        other => format!("`[…]` indexes a list or a map, not {}", a(other)),
    }
}

fn membership(element: &Ty, container: &Ty) -> String {
    match container {
        Ty::List(e) | Ty::Map(e, _) => format!(
            "`in` looks for {} in {}, whose {} are {}: compare values of one type",
            a(element),
            a(container),
            if matches!(container, Ty::List(_)) {
                "elements"
            } else {
                "keys"
            },
            e.name()
        ),
        other => format!("`in` looks in a list or a map, not in {}", a(other)),
    }
}

fn min_max(name: &str, l: &Ty, r: &Ty) -> String {
    let t = if matches!(l, Ty::Int | Ty::Double | Ty::Dyn) {
        r
    } else {
        l
    };
    let hint = if *t == Ty::Uint {
        ": convert it with int() or double()"
    } else {
        ""
    };
    format!("{name}() takes ints or doubles, not {}{hint}", a(t))
}

fn accessor(name: &str, on: &Ty, zone: &[Ty]) -> String {
    let date = DATE_ACCESSORS.contains(&name);
    match (on, zone) {
        (Ty::Duration, _) if date => format!(
            "{name}() is a method of timestamps only; a duration has getHours(), getMinutes(), getSeconds() and getMilliseconds()"
        ),
        (Ty::Duration, [_]) => format!("a duration's {name}() takes no time zone"),
        (Ty::Timestamp | Ty::Dyn, [z]) => {
            format!(
                "the time zone of {name}() is a string such as 'UTC', not {}",
                a(z)
            )
        }
        _ if date => format!("{name}() is a method of timestamps, not of {}", a(on)),
        _ => format!(
            "{name}() is a method of timestamps and durations, not of {}",
            a(on)
        ),
    }
}
