//! A static type check of a parsed kubelet expression: what cel-go's checker refuses in
//! Karpenter's environment, which cel-rust (that only parses and evaluates) would not notice,
//! and Karpenter's own rule that the result be typed exactly `int` or `double`.
//!
//! The environment is Karpenter's (`cel.NewEnv` with six variables and two functions): CEL's
//! standard library and macros with every optional feature off, no extension library, the
//! variables `instance_type` (string) and `vcpus`, `memory_mib`, `default_enis`, `ips_per_eni`,
//! `max_pods` (ints), and `max`/`min` over two ints or doubles. The check follows cel-go's
//! checker (v0.31 as Karpenter pins it; read at the research notes' snapshot, 18 commits after
//! v0.28.1): each call resolved against the declarations of [`decls`] with type parameters
//! bound as cel-go binds them ([`types`]), so these are refused as cel-go refuses them:
//!
//! - `==`/`!=` of two types (`vcpus == 2.0`, `instance_type == null`) and `<`/`>`/… of an int
//!   and a double or a uint (`vcpus > 2.5`): no cross-type comparisons in Karpenter's env;
//! - arithmetic across types (`vcpus * 1.5`), `?:` branches of two types (`c ? 1 : 2.0`,
//!   `c ? 1 : null`), list concatenation across element types, a map looked up by a key of
//!   another type, `in` across types;
//! - a result whose type is `dyn`: `dyn(5)`, `max(dyn(1), 2)`, `[1, 2.0][0]`, `c ? 1 : dyn(x)`
//!   (Karpenter compares the output type with `int` and `double` exactly); `int(dyn(x))` is an
//!   int and fine;
//! - `duration(int)` (cel-go dropped it in v0.28.1), the date accessors on durations and a
//!   time zone on a duration's accessors;
//! - the identifier `dyn` alone (a function, not a type name), unknown variables and functions,
//!   `max`/`min` with other than two arguments, and `existsOne` (cel-rust's parser expands it,
//!   cel-go's standard macros do not have it; refused in [`super::compile`]).
//!
//! What remains different from cel-go, each an over-refusal:
//!
//! - message literals are refused, and type names are only the standard ones
//!   (`int`, `list`, `google.protobuf.Duration`, …): cel-go also knows the well-known protobuf
//!   types, so `google.protobuf.Int64Value{value: 5} + vcpus` compiles in Karpenter;
//! - a tree deeper than [`super::field::MAX_DEPTH`] is refused for this provider's safety; cel-go
//!   bounds the nesting of each grammar rule at the same number, which a tree that deep almost
//!   always exceeds too.
//!
//! cel-go reports every error of an expression; this check stops at the first.

mod decls;
mod explain;
mod types;

use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use cel::common::ast::{SelectExpr, operators};

use super::field::Problem;
use super::variables::{Reads, Variable};
use decls::{DATE_ACCESSORS, TIME_ACCESSORS, arities, has_shape, overloads, resolve};
use explain::{no_overload, symbol, wrong_shape};
pub use types::Ty;
use types::{Bindings, a, more_general};

/// The identifiers that name a type in Karpenter's environment (cel-go's standard type names;
/// `dyn` is not one).
const TYPE_NAMES: &[&str] = &[
    "bool",
    "bytes",
    "double",
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
    /// Its type: [`Ty::Int`] or [`Ty::Double`].
    pub result: Ty,
    /// Whether it uses durations or timestamps, which this build of the CEL library cannot
    /// evaluate (so it is checked, not evaluated).
    pub needs_time: bool,
    /// The variables it reads.
    pub reads: Reads,
}

/// Checks `expr` (already parsed, at most [`super::field::MAX_DEPTH`] deep) against Karpenter's
/// environment; `unit` is what a number means in the field, for the message about the result.
pub fn check(expr: &IdedExpr, unit: &'static str) -> Result<Checked, Problem> {
    let mut checker = Checker::default();
    let result = checker.expr(expr)?;
    let result = checker.bindings.substitute(&result, true);
    match result {
        Ty::Int | Ty::Double => Ok(Checked {
            result,
            needs_time: checker.needs_time,
            reads: checker.reads,
        }),
        Ty::Dyn => Err(Problem::Dynamic { unit }),
        other => Err(Problem::NotANumber {
            found: a(&other),
            unit,
        }),
    }
}

#[derive(Default)]
struct Checker<'e> {
    /// Comprehension variables in scope, innermost last.
    scope: Vec<(&'e str, Ty)>,
    bindings: Bindings,
    needs_time: bool,
    reads: Reads,
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

/// Whether a call to `name` uses durations or timestamps.
fn uses_time(name: &str) -> bool {
    matches!(name, "duration" | "timestamp")
        || DATE_ACCESSORS.contains(&name)
        || TIME_ACCESSORS.contains(&name)
}

impl<'e> Checker<'e> {
    fn local(&self, name: &str) -> Option<Ty> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| t.clone())
    }

    /// Whether `name` is a variable here (a comprehension's or Karpenter's).
    fn declared(&self, name: &str) -> bool {
        self.local(name).is_some() || Variable::named(name).is_some()
    }

    fn expr(&mut self, e: &'e IdedExpr) -> Result<Ty, Problem> {
        match &e.expr {
            Expr::Unspecified => Err(Problem::Syntax {
                message: "an incomplete expression".into(),
            }),
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
                let mut element = None;
                for item in &l.elements {
                    let t = self.expr(item)?;
                    element = Some(self.join(element, t));
                }
                Ok(Ty::List(Box::new(
                    element.unwrap_or_else(|| self.bindings.fresh()),
                )))
            }
            Expr::Map(m) => {
                let (mut key, mut value) = (None, None);
                for entry in &m.entries {
                    match &entry.expr {
                        EntryExpr::MapEntry(me) => {
                            let k = self.expr(&me.key)?;
                            key = Some(self.join(key, k));
                            let v = self.expr(&me.value)?;
                            value = Some(self.join(value, v));
                        }
                        EntryExpr::StructField(f) => {
                            self.expr(&f.value)?;
                        }
                    }
                }
                let key = key.unwrap_or_else(|| self.bindings.fresh());
                let value = value.unwrap_or_else(|| self.bindings.fresh());
                Ok(Ty::Map(Box::new(key), Box::new(value)))
            }
            Expr::Struct(s) => Err(Problem::Type(format!(
                "`{}{{…}}` builds a message, and Karpenter's environment declares no message types: use the variables and numbers",
                s.type_name
            ))),
            Expr::Comprehension(c) => self.comprehension(c),
        }
    }

    /// The element type of an aggregate literal so far, joined with the next one's: the more
    /// general when they fit, else `dyn` (cel-go without homogeneous aggregate literals).
    fn join(&mut self, previous: Option<Ty>, next: Ty) -> Ty {
        match previous {
            None => next,
            Some(previous) if self.bindings.assignable(&previous, &next) => more_general(&previous, &next),
            Some(_) => Ty::Dyn,
        }
    }

    fn ident(&mut self, name: &str) -> Result<Ty, Problem> {
        if let Some(t) = self.local(name) {
            return Ok(t);
        }
        if let Some(v) = Variable::named(name) {
            self.reads.add(v);
            return Ok(match v {
                Variable::InstanceType => Ty::String,
                _ => Ty::Int,
            });
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
            && !self.declared(first)
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
        let operand = self.bindings.substitute(&operand, false);
        let result = match &operand {
            Ty::Map(_, v) => (**v).clone(),
            Ty::Dyn => Ty::Dyn,
            Ty::Param(_) => {
                self.bindings.assignable(&Ty::Dyn, &operand);
                Ty::Dyn
            }
            other => {
                return Err(Problem::Type(format!(
                    "`.{}` selects a field of {}, which has none: only maps have fields here",
                    s.field,
                    a(other)
                )));
            }
        };
        Ok(if s.test {
            Ty::Bool
        } else {
            self.bindings.substitute(&result, false)
        })
    }

    fn comprehension(&mut self, c: &'e ComprehensionExpr) -> Result<Ty, Problem> {
        if c.iter_var2.is_some() {
            return Err(Problem::Type(
                "a macro with two iteration variables needs CEL's two-variable comprehension extension, which Karpenter's environment does not have".into(),
            ));
        }
        let range = self.expr(&c.iter_range)?;
        let accumulator = self.expr(&c.accu_init)?;
        let range = self.bindings.substitute(&range, false);
        let element = match &range {
            Ty::List(e) => (**e).clone(),
            Ty::Map(k, _) => (**k).clone(),
            Ty::Dyn | Ty::Param(_) => {
                self.bindings.assignable(&Ty::Dyn, &range);
                Ty::Dyn
            }
            other => {
                return Err(Problem::Type(format!(
                    "a macro iterates over {}: only lists and maps can be iterated",
                    a(other)
                )));
            }
        };
        let depth = self.scope.len();
        self.scope.push((c.accu_var.as_str(), accumulator.clone()));
        self.scope.push((c.iter_var.as_str(), element));
        let outcome = self.loop_body(c, &accumulator);
        // The iteration variable is out of scope for the result; the accumulator is not.
        self.scope.truncate(depth + 1);
        let outcome = outcome.and_then(|()| self.expr(&c.result));
        self.scope.truncate(depth);
        Ok(self.bindings.substitute(&outcome?, false))
    }

    /// The loop's condition (a bool) and step (of the accumulator's type).
    fn loop_body(&mut self, c: &'e ComprehensionExpr, accumulator: &Ty) -> Result<(), Problem> {
        let condition = self.expr(&c.loop_cond)?;
        if !self.bindings.assignable(&Ty::Bool, &condition) {
            return Err(Problem::Type(format!(
                "a macro's condition must be a bool, not {}",
                a(&condition)
            )));
        }
        let step = self.expr(&c.loop_step)?;
        if !self.bindings.assignable(accumulator, &step) {
            let (want, got) = (
                self.bindings.substitute(accumulator, true),
                self.bindings.substitute(&step, true),
            );
            return Err(Problem::Type(format!(
                "a macro's step gives {} where {} is kept",
                a(&got),
                a(&want)
            )));
        }
        Ok(())
    }

    fn call(&mut self, c: &'e CallExpr) -> Result<Ty, Problem> {
        let name = c.func_name.as_str();
        let member = c.target.is_some();
        if let Some(target) = &c.target
            && let Some(first) = root(target)
            && !self.declared(first)
            && !TYPE_NAMES.contains(&first)
        {
            // `math.greatest(…)`: a namespaced function (an extension library), not a method.
            return Err(Problem::UnknownFunction {
                name: format!("{}.{name}", dotted(target).unwrap_or_default()),
            });
        }
        // The arity of max/min first: `max(a, b, c)` is about the count, whatever a, b, c are.
        if !member && matches!(name, "max" | "min") && c.args.len() != 2 {
            return Err(Problem::TwoArguments {
                name: name.to_string(),
                given: c.args.len(),
            });
        }
        let Some(all) = overloads(name) else {
            return Err(Problem::UnknownFunction {
                name: if name.starts_with('_') || name.starts_with('@') {
                    format!("{} with {} arguments", symbol(name), c.args.len())
                } else {
                    name.to_string()
                },
            });
        };
        if !has_shape(all, member, c.args.len() + usize::from(member)) {
            return Err(wrong_shape(name, member, c.args.len(), &arities(all, member)));
        }
        let exprs: Vec<&'e IdedExpr> = c.target.as_deref().into_iter().chain(&c.args).collect();
        let mut types = Vec::with_capacity(exprs.len());
        for e in &exprs {
            types.push(self.expr(e)?);
        }
        if uses_time(name) {
            self.needs_time = true;
        }
        if matches!(name, operators::LOGICAL_AND | operators::LOGICAL_OR) {
            for t in &types {
                if !self.bindings.assignable(t, &Ty::Bool) {
                    return Err(Problem::Type(format!(
                        "`{}` joins bools, and one side is {}: compare it first, e.g. `vcpus > 4 {} …`",
                        symbol(name),
                        a(&self.bindings.substitute(t, true)),
                        symbol(name)
                    )));
                }
            }
            return Ok(Ty::Bool);
        }
        match resolve(&mut self.bindings, all, member, &types) {
            Some(t) => Ok(t),
            None => {
                let shown: Vec<Ty> = types.iter().map(|t| self.bindings.substitute(t, true)).collect();
                Err(no_overload(name, member, &shown, &exprs))
            }
        }
    }
}
