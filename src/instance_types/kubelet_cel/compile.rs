//! Compiling a kubelet expression: which values are expressions at all, the CEL environment
//! Karpenter declares (built once), parsing with cel-rust, the bounds on length and nesting,
//! and the static check of [`super::check`].
//!
//! cel-rust's parser builds its tree recursively, and a long chain of operators (`1+1+…`) makes
//! a tree as deep as the chain is long before any bound can be applied; its evaluator, too,
//! recurses with large frames (in a debug build, 60 nested calls overflowed a 2 MiB stack). So
//! the parse and the check, and later the evaluation ([`super::evaluate`]), run on a thread of
//! their own with a large stack ([`CEL_STACK`]: reserved address space, touched only as deep as
//! the work goes); what the parse hands back is at most [`MAX_DEPTH`] deep. A panic in the
//! library there becomes a [`Problem::Unchecked`], never the provider's.

use std::sync::{Arc, LazyLock};

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue, SourceInfo};
use cel::common::types::{CelDouble, CelInt, DOUBLE_TYPE, INT_TYPE};
use cel::common::value::CowVal;
use cel::{Env, ExecutionError};

use super::check::{Checked, check};
use super::field::{ExpressionError, Field, MAX_CHARS, MAX_DEPTH, Problem};
use super::variables::Variable;

/// The stack of the threads that parse and evaluate: address space, committed only as far as
/// the work goes.
pub const CEL_STACK: usize = 256 << 20;

/// Karpenter's CEL environment: the standard library without optional syntax, and `max`/`min`
/// over two ints or doubles. `Err` only if the library refuses a declaration (a bug, reported
/// as "not checked", never a panic).
static ENV: LazyLock<Result<Arc<Env>, String>> = LazyLock::new(|| {
    let mut env = Env::stdlib().with_optional_support(false);
    for name in ["max", "min"] {
        let function = if name == "max" { larger } else { smaller };
        for (id, args) in [
            ("int_int", [INT_TYPE, INT_TYPE]),
            ("int_double", [INT_TYPE, DOUBLE_TYPE]),
            ("double_int", [DOUBLE_TYPE, INT_TYPE]),
            ("double_double", [DOUBLE_TYPE, DOUBLE_TYPE]),
        ] {
            env.add_overload(name, &format!("{name}_{id}"), Vec::from(args), function)
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(Arc::new(env))
});

/// The environment expressions are evaluated in.
pub(super) fn environment() -> Result<Arc<Env>, String> {
    ENV.as_ref().map(Arc::clone).map_err(Clone::clone)
}

/// An int or a double argument of `max`/`min`.
enum Number {
    Int(i64),
    Double(f64),
}

fn number(v: &CowVal<'_, '_>) -> Option<Number> {
    if let Some(i) = v.downcast_ref::<CelInt>() {
        return Some(Number::Int(*i.inner()));
    }
    v.downcast_ref::<CelDouble>().map(|d| Number::Double(*d.inner()))
}

/// `max`/`min` as Karpenter defines them: two ints give an int; otherwise both are taken as
/// doubles and a double is returned. The left argument is kept unless the right one is strictly
/// larger (smaller), so with a NaN the result is whichever side that comparison leaves, as in
/// Karpenter's Go.
fn pick<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    name: &str,
    larger: bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [l, r] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    match (number(l), number(r)) {
        (Some(Number::Int(l)), Some(Number::Int(r))) => {
            let keep_l = if larger { l > r } else { l < r };
            Ok(CowVal::owned(CelInt::from(if keep_l { l } else { r })))
        }
        (Some(l), Some(r)) => {
            let as_double = |n: Number| match n {
                Number::Int(i) => i as f64,
                Number::Double(d) => d,
            };
            let (l, r) = (as_double(l), as_double(r));
            let keep_l = if larger { l > r } else { l < r };
            Ok(CowVal::owned(CelDouble::from(if keep_l { l } else { r })))
        }
        _ => Err(ExecutionError::function_error(name, "takes two ints or doubles")),
    }
}

fn larger<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    pick(args, "max", true)
}

fn smaller<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    pick(args, "min", false)
}

/// Whether a `kube_reserved`/`system_reserved` value is an expression: Karpenter evaluates a
/// value as CEL exactly when it does not parse as a Kubernetes quantity, so `"480"` (480 cores
/// for cpu) and `"1e3"` are quantities, `"vcpus * 10"` and `"70 + vcpus"` expressions.
pub fn is_expression(value: &str) -> bool {
    !is_quantity(value)
}

/// Kubernetes' quantity syntax as its parser accepts it: an optional sign, digits with an
/// optional fraction (either part may be empty), then a suffix: none, a decimal one (`n u m k
/// M G T P E`), a binary one (`Ki Mi Gi Ti Pi Ei`) or an exponent (`e`/`E` and a 64-bit
/// integer, sign allowed).
pub fn is_quantity(value: &str) -> bool {
    let b = value.as_bytes();
    if b.is_empty() {
        return false;
    }
    let mut i = usize::from(matches!(b[0], b'+' | b'-'));
    let digits = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    i = digits(i);
    if b.get(i) == Some(&b'.') {
        i = digits(i + 1);
    }
    let suffix_start = i;
    while b.get(i).is_some_and(|c| b"eEinumkKMGTP".contains(c)) {
        i += 1;
    }
    if b.get(i).is_some_and(|c| matches!(c, b'+' | b'-')) {
        i += 1;
    }
    i = digits(i);
    if i != b.len() {
        return false;
    }
    let suffix = &value[suffix_start..];
    matches!(
        suffix,
        "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"
    ) || (suffix.len() > 1 && suffix.starts_with(['e', 'E']) && suffix[1..].parse::<i64>().is_ok())
}

/// A kubelet expression that compiles in Karpenter's environment, ready to evaluate.
#[derive(Debug, Clone)]
pub struct Compiled {
    field: Field,
    source: String,
    expr: IdedExpr,
    checked: Checked,
}

impl Compiled {
    /// The attribute the expression is the value of.
    pub fn field(&self) -> &Field {
        &self.field
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The result type: `int` or `double`.
    pub fn result_type(&self) -> String {
        self.checked.result.name()
    }

    /// Whether the expression reads the variable `v`.
    pub fn reads(&self, v: Variable) -> bool {
        self.checked.reads.contains(v)
    }

    /// Whether it reads an ENI figure (`default_enis`, `ips_per_eni`), which the offline table
    /// lacks for a few types.
    pub fn reads_eni_figures(&self) -> bool {
        self.checked.reads.eni_figures()
    }

    /// Whether this build can evaluate it (not when it uses durations or timestamps: the CEL
    /// library is built without its time support).
    pub fn evaluable(&self) -> bool {
        !self.checked.needs_time
    }

    pub(super) fn expr(&self) -> &IdedExpr {
        &self.expr
    }
}

/// Compiles `source`, the value of `field`, as Karpenter would: parse, check, result an int or
/// a double. The error names the field and says what to write instead. A reservation that
/// starts with `-` is refused first, as Karpenter's structural validation refuses it before
/// any CEL.
pub fn compile(field: &Field, source: &str) -> Result<Compiled, ExpressionError> {
    let error = |problem| ExpressionError {
        field: field.clone(),
        expression: source.to_string(),
        problem,
    };
    if field.key().is_some() && source.starts_with('-') {
        return Err(error(Problem::StartsWithMinus));
    }
    let chars = source.chars().count();
    if chars > MAX_CHARS {
        return Err(error(Problem::TooLong { chars }));
    }
    let env = environment().map_err(|reason| error(Problem::Unchecked { reason }))?;
    let unit = field.unit();
    let outcome = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("kubelet-cel".into())
            .stack_size(CEL_STACK)
            .spawn_scoped(scope, || parse_and_check(&env, source, unit));
        match spawned {
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                Err(Problem::Unchecked {
                    reason: "the CEL library failed on it".into(),
                })
            }),
            Err(e) => Err(Problem::Unchecked {
                reason: format!("no thread for the CEL parser: {e}"),
            }),
        }
    });
    let (expr, checked) = outcome.map_err(error)?;
    Ok(Compiled {
        field: field.clone(),
        source: source.to_string(),
        expr,
        checked,
    })
}

/// Parse, bound the depth, check; on the parser's thread (a too-deep tree is dropped there).
fn parse_and_check(env: &Env, source: &str, unit: &'static str) -> Result<(IdedExpr, Checked), Problem> {
    let limit = u16::try_from(MAX_DEPTH).unwrap_or(u16::MAX);
    // Backquoted field names (`m.`a-b``) are on by default from cel-go v0.28.0.
    let (expr, info) = env
        .parser()
        .max_recursion_depth(limit)
        .enable_ident_escape_syntax(true)
        .parse_with_source_info(source)
        .map_err(|errors| {
            let first = errors.errors.first();
            let message = first.map(|e| e.msg.clone()).unwrap_or_default();
            if message.contains("Recursion limit") {
                return Problem::TooDeep;
            }
            let at = first
                .map(|e| format!(" (line {}, column {})", e.pos.0, e.pos.1))
                .unwrap_or_default();
            // ANTLR's list of every token that could come next says less than this.
            let message = if message.contains("mismatched input '<EOF>'") {
                "it ends too early: a call, a bracket or an operator is not complete".to_string()
            } else {
                message
            };
            Problem::Syntax {
                message: format!("{message}{at}"),
            }
        })?;
    if depth(&expr) > MAX_DEPTH {
        return Err(Problem::TooDeep);
    }
    refuse_exists_one(&expr, &info, source)?;
    let checked = check(&expr, unit)?;
    Ok((expr, checked))
}

/// cel-rust's parser expands `existsOne(…)` like `exists_one(…)`; cel-go's standard macros
/// do not have it, so in Karpenter it is an unknown method. Both expand to the same tree (its
/// accumulator starts at 0 and the result is `accumulator == 1`), placed at the call's `(`:
/// the name is read from the source just before it.
fn refuse_exists_one(root: &IdedExpr, info: &SourceInfo, source: &str) -> Result<(), Problem> {
    let mut stack = vec![root];
    let mut children = Vec::new();
    while let Some(e) = stack.pop() {
        if let Expr::Comprehension(c) = &e.expr
            && matches!(&c.accu_init.expr, Expr::Literal(LiteralValue::Int(_)))
            && let Some((open, _)) = info.offset_for(e.id)
            && let Some(before) = source.get(..open as usize)
            && before
                .trim_end()
                .strip_suffix("existsOne")
                .is_some_and(|s| s.trim_end().ends_with('.'))
        {
            return Err(Problem::Type(
                "`existsOne` is not a macro in Karpenter's environment (cel-go's standard macros have `exists_one` only): write `.exists_one(x, …)`".into(),
            ));
        }
        children.clear();
        children_of(e, &mut children);
        stack.extend(children.iter().copied());
    }
    Ok(())
}

/// How deep the tree goes (a leaf is 1), without recursion.
pub(super) fn depth(root: &IdedExpr) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(root, 1usize)];
    let mut children = Vec::new();
    while let Some((e, d)) = stack.pop() {
        deepest = deepest.max(d);
        children.clear();
        children_of(e, &mut children);
        stack.extend(children.iter().map(|c| (*c, d + 1)));
    }
    deepest
}

fn children_of<'e>(e: &'e IdedExpr, out: &mut Vec<&'e IdedExpr>) {
    match &e.expr {
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => {}
        Expr::Call(c) => {
            out.extend(c.target.as_deref());
            out.extend(&c.args);
        }
        Expr::Comprehension(c) => {
            out.extend([&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result])
        }
        Expr::List(l) => out.extend(&l.elements),
        Expr::Map(m) => entries(&m.entries, out),
        Expr::Select(s) => out.push(&s.operand),
        Expr::Struct(s) => entries(&s.entries, out),
    }
}

fn entries<'e>(entries: &'e [cel::common::ast::IdedEntryExpr], out: &mut Vec<&'e IdedExpr>) {
    for entry in entries {
        match &entry.expr {
            EntryExpr::MapEntry(m) => out.extend([&m.key, &m.value]),
            EntryExpr::StructField(f) => out.push(&f.value),
        }
    }
}
