//! A static type check of a parsed kubelet expression, for what Karpenter's cel-go environment
//! refuses at compile time and cel-rust (which only parses and evaluates) would not notice:
//! unknown variables and functions, `max`/`min` with other than two arguments, arithmetic on an
//! int and a double (CEL converts nothing implicitly), `?:` branches of different types, a
//! result that is not an int or a double.
//!
//! The environment checked against is Karpenter's: CEL's standard library and macros, no
//! extension library, the variables `instance_type` (string) and `vcpus`, `memory_mib`,
//! `default_enis`, `ips_per_eni`, `max_pods` (ints), and `max`/`min` over two ints or doubles
//! (int and int give an int, any double a double).
//!
//! The check refuses only what cel-go's checker refuses for certain. Where this model is
//! coarser than cel-go's, the type is [`Ty::Unknown`] and nothing is refused; each such
//! leniency:
//!
//! - `==` and `!=` accept any two operands (cel-go wants both of one type, except through
//!   `dyn`);
//! - a list or map literal whose elements differ in type, `dyn(…)`, the elements of such
//!   aggregates, and a `?:` with one branch of such a type are not followed (cel-go types them
//!   `dyn`, and Karpenter refuses a `dyn` result; the evaluation still refuses a result that is
//!   not a number);
//! - `null` is taken to fit anywhere a `?:` branch or an operand of `==` is;
//! - list concatenation of different element types, map keys of the wrong type, and the
//!   arguments of `in` are not compared;
//! - the identifier `dyn` alone is taken as a type name;
//! - a function of cel-go's standard library newer than the list here would be refused as
//!   unknown (the list is cel-go's standard declarations: conversions, `size`, `matches`,
//!   `contains`, `startsWith`, `endsWith`, the timestamp and duration accessors).
//!
//! One refusal is this provider's own, for its safety rather than cel-go's: a tree deeper than
//! [`super::field::MAX_DEPTH`]. cel-go bounds the nesting of each grammar rule at the same
//! number, which a tree that deep almost always exceeds too.

use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use cel::common::ast::{SelectExpr, operators};

use super::field::Problem;

/// A CEL type as far as this check follows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    Int,
    Uint,
    Double,
    Bool,
    String,
    Bytes,
    Null,
    Duration,
    Timestamp,
    /// A type value (`int`, `type(x)`).
    Type,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    /// Not followed here (cel-go may know it): never refused.
    Unknown,
}

impl Ty {
    /// The type as CEL names it, for messages.
    pub fn name(&self) -> String {
        match self {
            Ty::Int => "int".into(),
            Ty::Uint => "uint".into(),
            Ty::Double => "double".into(),
            Ty::Bool => "bool".into(),
            Ty::String => "string".into(),
            Ty::Bytes => "bytes".into(),
            Ty::Null => "null".into(),
            Ty::Duration => "duration".into(),
            Ty::Timestamp => "timestamp".into(),
            Ty::Type => "type".into(),
            Ty::List(e) => format!("list({})", e.name()),
            Ty::Map(k, v) => format!("map({}, {})", k.name(), v.name()),
            Ty::Unknown => "dyn".into(),
        }
    }

    /// `int`/`uint`/`double`.
    fn numeric(&self) -> bool {
        matches!(self, Ty::Int | Ty::Uint | Ty::Double)
    }

    /// Whether two types certainly differ (neither is, or holds, an unfollowed type or null).
    fn differs(&self, other: &Ty) -> bool {
        match (self, other) {
            (Ty::Unknown | Ty::Null, _) | (_, Ty::Unknown | Ty::Null) => false,
            (Ty::List(a), Ty::List(b)) => a.differs(b),
            (Ty::Map(ka, va), Ty::Map(kb, vb)) => ka.differs(kb) || va.differs(vb),
            (a, b) => std::mem::discriminant(a) != std::mem::discriminant(b),
        }
    }

    /// Whether the type is known to be one of the kinds `pred` accepts (an unfollowed type is).
    fn fits(&self, pred: impl Fn(&Ty) -> bool) -> bool {
        *self == Ty::Unknown || pred(self)
    }
}

/// The article and name of a type: "an int", "a double".
fn a(t: &Ty) -> String {
    let name = t.name();
    let article = if name.starts_with(['a', 'e', 'i', 'o']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// The type of a kubelet variable.
pub fn variable(name: &str) -> Option<Ty> {
    match name {
        "instance_type" => Some(Ty::String),
        "vcpus" | "memory_mib" | "default_enis" | "ips_per_eni" | "max_pods" => Some(Ty::Int),
        _ => None,
    }
}

/// The identifiers that name a type in CEL's standard environment.
const TYPE_NAMES: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "dyn",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "type",
    "uint",
    "google.protobuf.Duration",
    "google.protobuf.Timestamp",
];

/// What an expression was found to be.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// Its type: int, double, or [`Ty::Unknown`].
    pub result: Ty,
    /// Whether it uses durations or timestamps, which this build of the CEL library cannot
    /// evaluate (so it is checked, not evaluated).
    pub needs_time: bool,
}

/// Checks `expr` (already parsed, at most [`super::field::MAX_DEPTH`] deep) against Karpenter's
/// environment; `unit` is what a number means in the field, for the message about the result.
pub fn check(expr: &IdedExpr, unit: &'static str) -> Result<Checked, Problem> {
    let mut checker = Checker::default();
    let result = checker.expr(expr)?;
    if !result.fits(|t| matches!(t, Ty::Int | Ty::Double)) {
        return Err(Problem::NotANumber {
            found: a(&result),
            unit,
        });
    }
    Ok(Checked {
        result,
        needs_time: checker.needs_time,
    })
}

#[derive(Default)]
struct Checker<'e> {
    /// Comprehension variables in scope, innermost last.
    scope: Vec<(&'e str, Ty)>,
    needs_time: bool,
}

/// An identifier or a literal as written, for a suggestion; `…` for anything longer.
fn shown(e: &IdedExpr) -> String {
    match &e.expr {
        Expr::Ident(name) => name.clone(),
        Expr::Literal(LiteralValue::Int(i)) => i.inner().to_string(),
        Expr::Literal(LiteralValue::Double(d)) => format!("{:?}", d.inner()),
        Expr::Select(s) if !s.test => format!("{}.{}", shown(&s.operand), s.field),
        _ => "…".to_string(),
    }
}

/// The dotted name a chain of selections on an identifier spells (`google.protobuf.Duration`).
fn dotted(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(s) if !s.test => Some(format!("{}.{}", dotted(&s.operand)?, s.field)),
        _ => None,
    }
}

/// The identifier a chain of selections starts from.
fn root(e: &IdedExpr) -> Option<&str> {
    match &e.expr {
        Expr::Ident(name) => Some(name),
        Expr::Select(s) if !s.test => root(&s.operand),
        _ => None,
    }
}

/// The symbol of a binary operator, for messages.
fn symbol(function: &str) -> &str {
    function.trim_matches('_')
}

impl<'e> Checker<'e> {
    fn in_scope(&self, name: &str) -> Option<Ty> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| t.clone())
            .or_else(|| variable(name))
    }

    fn expr(&mut self, e: &'e IdedExpr) -> Result<Ty, Problem> {
        match &e.expr {
            Expr::Unspecified => Ok(Ty::Unknown),
            Expr::Literal(l) => Ok(match l {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Bytes(_) => Ty::Bytes,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::Null => Ty::Null,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::UInt(_) => Ty::Uint,
            }),
            Expr::Ident(name) => self.ident(name),
            Expr::Select(s) => self.select(e, s),
            Expr::Call(c) => self.call(c),
            Expr::List(l) => {
                let mut types = Vec::with_capacity(l.elements.len());
                for element in &l.elements {
                    types.push(self.expr(element)?);
                }
                Ok(Ty::List(Box::new(common(&types))))
            }
            Expr::Map(m) => {
                let (mut keys, mut values) = (Vec::new(), Vec::new());
                for entry in &m.entries {
                    match &entry.expr {
                        EntryExpr::MapEntry(me) => {
                            keys.push(self.expr(&me.key)?);
                            values.push(self.expr(&me.value)?);
                        }
                        EntryExpr::StructField(f) => {
                            self.expr(&f.value)?;
                        }
                    }
                }
                Ok(Ty::Map(Box::new(common(&keys)), Box::new(common(&values))))
            }
            Expr::Struct(s) => Err(Problem::Type(format!(
                "`{}{{…}}` builds a message, and Karpenter's environment declares no message types: use the variables and numbers",
                s.type_name
            ))),
            Expr::Comprehension(c) => self.comprehension(c),
        }
    }

    fn ident(&self, name: &str) -> Result<Ty, Problem> {
        if let Some(t) = self.in_scope(name) {
            return Ok(t);
        }
        if TYPE_NAMES.contains(&name) {
            return Ok(Ty::Type);
        }
        Err(Problem::UnknownVariable {
            name: name.to_string(),
        })
    }

    fn select(&mut self, whole: &'e IdedExpr, s: &'e SelectExpr) -> Result<Ty, Problem> {
        // A dotted name whose first part is no variable: a type name, or an unknown variable.
        if !s.test
            && let Some(first) = root(whole)
            && self.in_scope(first).is_none()
        {
            let name = dotted(whole).unwrap_or_else(|| first.to_string());
            if TYPE_NAMES.contains(&name.as_str()) {
                return Ok(Ty::Type);
            }
            return Err(Problem::UnknownVariable {
                name: first.to_string(),
            });
        }
        let operand = self.expr(&s.operand)?;
        let result = match &operand {
            Ty::Map(_, v) => (**v).clone(),
            Ty::Unknown => Ty::Unknown,
            other => {
                return Err(Problem::Type(format!(
                    "`.{}` selects a field of {}, which has none: only maps have fields here",
                    s.field,
                    a(other)
                )));
            }
        };
        Ok(if s.test { Ty::Bool } else { result })
    }

    fn comprehension(&mut self, c: &'e ComprehensionExpr) -> Result<Ty, Problem> {
        if c.iter_var2.is_some() {
            return Err(Problem::Type(
                "a macro with two iteration variables needs CEL's two-variable comprehension extension, which Karpenter's environment does not have".into(),
            ));
        }
        let range = self.expr(&c.iter_range)?;
        let element = match range {
            Ty::List(e) => *e,
            Ty::Map(k, _) => *k,
            Ty::Unknown => Ty::Unknown,
            other => {
                return Err(Problem::Type(format!(
                    "a macro iterates over {}: only lists and maps can be iterated",
                    a(&other)
                )));
            }
        };
        let init = self.expr(&c.accu_init)?;
        let depth = self.scope.len();
        self.scope.push((c.iter_var.as_str(), element));
        self.scope.push((c.accu_var.as_str(), init));
        let outcome = (|| {
            self.expr(&c.loop_cond)?;
            self.expr(&c.loop_step)?;
            self.expr(&c.result)
        })();
        self.scope.truncate(depth);
        outcome
    }

    fn call(&mut self, c: &'e CallExpr) -> Result<Ty, Problem> {
        if let Some(target) = &c.target {
            return self.member(target, &c.func_name, &c.args);
        }
        let name = c.func_name.as_str();
        // The arity of max/min first: `max(a, b, c)` is about the count, whatever a, b, c are.
        if matches!(name, "max" | "min") && c.args.len() != 2 {
            return Err(Problem::TwoArguments {
                name: name.to_string(),
                given: c.args.len(),
            });
        }
        if !known_global(name, c.args.len()) {
            return Err(Problem::UnknownFunction {
                name: if name.starts_with('_') || name.starts_with('@') {
                    format!("{name} with {} arguments", c.args.len())
                } else {
                    name.to_string()
                },
            });
        }
        let mut args = Vec::with_capacity(c.args.len());
        for arg in &c.args {
            args.push(self.expr(arg)?);
        }
        match (name, args.as_slice()) {
            (operators::CONDITIONAL, [cond, yes, no]) => conditional(cond, yes, no),
            (operators::LOGICAL_AND | operators::LOGICAL_OR, [l, r]) => {
                for t in [l, r] {
                    if !t.fits(|t| *t == Ty::Bool) {
                        return Err(Problem::Type(format!(
                            "`{}` joins bools, and one side is {}: compare it first, e.g. `vcpus > 4 {} …`",
                            symbol(name),
                            a(t),
                            symbol(name)
                        )));
                    }
                }
                Ok(Ty::Bool)
            }
            (operators::LOGICAL_NOT | operators::NOT_STRICTLY_FALSE, [t]) => {
                if !t.fits(|t| *t == Ty::Bool) {
                    return Err(Problem::Type(format!(
                        "`!` negates a bool, not {}: compare first, e.g. `!(vcpus > 4)`",
                        a(t)
                    )));
                }
                Ok(Ty::Bool)
            }
            (operators::NEGATE, [t]) => match t {
                Ty::Int | Ty::Double | Ty::Unknown => Ok(t.clone()),
                other => Err(Problem::Type(format!(
                    "unary `-` applies to an int or a double, not {}",
                    a(other)
                ))),
            },
            (
                operators::ADD
                | operators::SUBSTRACT
                | operators::MULTIPLY
                | operators::DIVIDE
                | operators::MODULO,
                [l, r],
            ) => arithmetic(name, l, r, &c.args),
            (operators::EQUALS | operators::NOT_EQUALS, [_, _]) => Ok(Ty::Bool),
            (
                operators::LESS | operators::LESS_EQUALS | operators::GREATER | operators::GREATER_EQUALS,
                [l, r],
            ) => comparison(name, l, r),
            (operators::INDEX, [container, index]) => self.index(container, index),
            (operators::IN, [_, container]) => {
                if !container.fits(|t| matches!(t, Ty::List(_) | Ty::Map(..))) {
                    return Err(Problem::Type(format!(
                        "`in` looks in a list or a map, not in {}",
                        a(container)
                    )));
                }
                Ok(Ty::Bool)
            }
            ("max" | "min", [l, r]) => min_max(name, l, r),
            (_, [t]) if conversion(name).is_some() => {
                let (accepts, result) = conversion(name).unwrap_or((&[], Ty::Unknown));
                if matches!(name, "duration" | "timestamp") {
                    self.needs_time = true;
                }
                if !t.fits(|t| accepts.iter().any(|k| same_kind(k, t))) {
                    return Err(Problem::Type(format!(
                        "{name}() does not take {}{}",
                        a(t),
                        match name {
                            "int" | "double" => ": it converts an int, a uint, a double or a string",
                            _ => "",
                        }
                    )));
                }
                Ok(result)
            }
            ("size", [t]) => size(t),
            ("type", [_]) => Ok(Ty::Type),
            ("dyn", [_]) => Ok(Ty::Unknown),
            ("matches", [s, p]) => strings("matches", s, p),
            _ => Err(Problem::UnknownFunction {
                name: name.to_string(),
            }),
        }
    }

    /// `target.name(args)`.
    fn member(&mut self, target: &'e IdedExpr, name: &str, args: &'e [IdedExpr]) -> Result<Ty, Problem> {
        // `math.greatest(…)`: a namespaced function (an extension library), not a method.
        if let Some(first) = root(target)
            && self.in_scope(first).is_none()
            && !TYPE_NAMES.contains(&first)
        {
            return Err(Problem::UnknownFunction {
                name: format!("{}.{name}", dotted(target).unwrap_or_default()),
            });
        }
        let on = self.expr(target)?;
        let mut types = Vec::with_capacity(args.len());
        for arg in args {
            types.push(self.expr(arg)?);
        }
        match (name, types.as_slice()) {
            ("size", []) => size(&on),
            ("contains" | "startsWith" | "endsWith" | "matches", [arg]) => strings(name, &on, arg),
            (
                "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate" | "getDayOfWeek"
                | "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds",
                [] | [_],
            ) => {
                self.needs_time = true;
                if !on.fits(|t| matches!(t, Ty::Timestamp | Ty::Duration)) {
                    return Err(Problem::Type(format!(
                        "{name}() is a method of timestamps and durations, not of {}",
                        a(&on)
                    )));
                }
                Ok(Ty::Int)
            }
            _ => Err(Problem::UnknownFunction {
                name: format!("{}.{name}()", on.name()),
            }),
        }
    }

    fn index(&self, container: &Ty, index: &Ty) -> Result<Ty, Problem> {
        match container {
            Ty::List(element) => {
                if !index.fits(|t| *t == Ty::Int) {
                    return Err(Problem::Type(format!(
                        "a list is indexed by an int, not by {}",
                        a(index)
                    )));
                }
                Ok((**element).clone())
            }
            Ty::Map(_, value) => Ok((**value).clone()),
            Ty::Unknown => Ok(Ty::Unknown),
            other => Err(Problem::Type(format!(
                "`[…]` indexes a list or a map, not {}",
                a(other)
            ))),
        }
    }
}

/// The element type of an aggregate literal: the one type of all elements, else unfollowed.
fn common(types: &[Ty]) -> Ty {
    match types.split_first() {
        Some((first, rest)) if rest.iter().all(|t| t == first) => first.clone(),
        _ => Ty::Unknown,
    }
}

/// Whether `t` is of the kind `k` (lists and maps whatever their elements).
fn same_kind(k: &Ty, t: &Ty) -> bool {
    std::mem::discriminant(k) == std::mem::discriminant(t)
}

/// Whether a global function (or operator) of that name and argument count exists in
/// Karpenter's environment.
fn known_global(name: &str, args: usize) -> bool {
    match name {
        operators::CONDITIONAL => args == 3,
        operators::LOGICAL_AND
        | operators::LOGICAL_OR
        | operators::ADD
        | operators::SUBSTRACT
        | operators::MULTIPLY
        | operators::DIVIDE
        | operators::MODULO
        | operators::EQUALS
        | operators::NOT_EQUALS
        | operators::LESS
        | operators::LESS_EQUALS
        | operators::GREATER
        | operators::GREATER_EQUALS
        | operators::INDEX
        | operators::IN
        | "max"
        | "min"
        | "matches" => args == 2,
        operators::LOGICAL_NOT
        | operators::NOT_STRICTLY_FALSE
        | operators::NEGATE
        | "size"
        | "type"
        | "dyn" => args == 1,
        other => conversion(other).is_some() && args == 1,
    }
}

/// What a conversion function accepts and gives (CEL's standard overloads).
fn conversion(name: &str) -> Option<(&'static [Ty], Ty)> {
    use Ty::{Bool, Bytes, Double, Duration, Int, String, Timestamp, Uint};
    Some(match name {
        "int" => (&[Int, Uint, Double, String, Duration, Timestamp], Int),
        "uint" => (&[Uint, Int, Double, String], Uint),
        "double" => (&[Double, Int, Uint, String], Double),
        "string" => (
            &[String, Bool, Bytes, Double, Duration, Int, Timestamp, Uint],
            String,
        ),
        "bool" => (&[Bool, String], Bool),
        "bytes" => (&[Bytes, String], Bytes),
        "duration" => (&[Duration, Int, String], Duration),
        "timestamp" => (&[Timestamp, Int, String], Timestamp),
        _ => return None,
    })
}

fn size(t: &Ty) -> Result<Ty, Problem> {
    if !t.fits(|t| matches!(t, Ty::String | Ty::Bytes | Ty::List(_) | Ty::Map(..))) {
        return Err(Problem::Type(format!(
            "size() measures a string, bytes, a list or a map, not {}",
            a(t)
        )));
    }
    Ok(Ty::Int)
}

fn strings(name: &str, on: &Ty, arg: &Ty) -> Result<Ty, Problem> {
    for t in [on, arg] {
        if !t.fits(|t| *t == Ty::String) {
            return Err(Problem::Type(format!(
                "{name}() works on strings, not on {}",
                a(t)
            )));
        }
    }
    Ok(Ty::Bool)
}

fn conditional(cond: &Ty, yes: &Ty, no: &Ty) -> Result<Ty, Problem> {
    if !cond.fits(|t| *t == Ty::Bool) {
        return Err(Problem::Type(format!(
            "the condition of `?:` must be a bool, not {}: compare, e.g. `vcpus > 4 ? … : …`",
            a(cond)
        )));
    }
    if yes.differs(no) {
        let hint = if matches!((yes, no), (Ty::Int, Ty::Double) | (Ty::Double, Ty::Int)) {
            ": CEL converts nothing implicitly, so wrap the int one in double() or the double one in int()"
        } else {
            ": make both the same type"
        };
        return Err(Problem::Type(format!(
            "the two branches of `?:` have different types, {} and {}{hint}",
            yes.name(),
            no.name()
        )));
    }
    Ok(if yes == no { yes.clone() } else { Ty::Unknown })
}

fn min_max(name: &str, l: &Ty, r: &Ty) -> Result<Ty, Problem> {
    for t in [l, r] {
        if !t.fits(|t| matches!(t, Ty::Int | Ty::Double)) {
            let hint = if *t == Ty::Uint {
                ": convert it with int() or double()"
            } else {
                ""
            };
            return Err(Problem::Type(format!(
                "{name}() takes ints or doubles, not {}{hint}",
                a(t)
            )));
        }
    }
    Ok(match (l, r) {
        (Ty::Int, Ty::Int) => Ty::Int,
        (Ty::Unknown, _) | (_, Ty::Unknown) => Ty::Unknown,
        _ => Ty::Double,
    })
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
        ),
        operators::SUBSTRACT => t.numeric() || matches!(t, Ty::Duration | Ty::Timestamp),
        operators::MODULO => matches!(t, Ty::Int | Ty::Uint),
        _ => t.numeric(),
    }
}

fn arithmetic(function: &str, l: &Ty, r: &Ty, args: &[IdedExpr]) -> Result<Ty, Problem> {
    let op = symbol(function);
    for t in [l, r] {
        if !t.fits(|t| arithmetic_takes(function, t)) {
            let hint = if function == operators::MODULO && *t == Ty::Double {
                ": `%` is for ints; convert with int() first"
            } else {
                ""
            };
            return Err(Problem::Type(format!("`{op}` does not apply to {}{hint}", a(t))));
        }
    }
    if *l == Ty::Unknown || *r == Ty::Unknown {
        return Ok(Ty::Unknown);
    }
    let same = std::mem::discriminant(l) == std::mem::discriminant(r);
    let result = match (function, l, r) {
        (_, Ty::Int | Ty::Uint | Ty::Double, _) if l == r => Some(l.clone()),
        (operators::ADD, Ty::String | Ty::Bytes | Ty::Duration, _) if same => Some(l.clone()),
        (operators::ADD, Ty::List(a), Ty::List(b)) => Some(if a == b {
            l.clone()
        } else {
            Ty::List(Box::new(Ty::Unknown))
        }),
        (operators::ADD, Ty::Duration, Ty::Timestamp)
        | (operators::ADD, Ty::Timestamp, Ty::Duration)
        | (operators::SUBSTRACT, Ty::Timestamp, Ty::Duration) => Some(Ty::Timestamp),
        (operators::SUBSTRACT, Ty::Duration, Ty::Duration)
        | (operators::SUBSTRACT, Ty::Timestamp, Ty::Timestamp) => Some(Ty::Duration),
        _ => None,
    };
    result.ok_or_else(|| Problem::Type(mismatch(op, l, r, args)))
}

/// Why `l op r` has no overload, and what to write instead.
fn mismatch(op: &str, l: &Ty, r: &Ty, args: &[IdedExpr]) -> String {
    let said = format!("`{op}` of {} and {}: CEL converts nothing implicitly", a(l), a(r));
    let (left, right) = match args {
        [x, y] => (shown(x), shown(y)),
        _ => ("…".to_string(), "…".to_string()),
    };
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
        _ => format!("{said}: convert one side"),
    }
}

fn comparison(function: &str, l: &Ty, r: &Ty) -> Result<Ty, Problem> {
    let orderable = |t: &Ty| {
        t.numeric()
            || matches!(
                t,
                Ty::Bool | Ty::String | Ty::Bytes | Ty::Duration | Ty::Timestamp
            )
    };
    for t in [l, r] {
        if !t.fits(orderable) {
            return Err(Problem::Type(format!(
                "`{}` does not order {}",
                symbol(function),
                a(t)
            )));
        }
    }
    let fine = *l == Ty::Unknown || *r == Ty::Unknown || l == r || (l.numeric() && r.numeric());
    if !fine {
        return Err(Problem::Type(format!(
            "`{}` compares {} with {}: compare values of one type",
            symbol(function),
            a(l),
            a(r)
        )));
    }
    Ok(Ty::Bool)
}
