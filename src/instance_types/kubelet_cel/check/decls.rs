//! The functions of Karpenter's CEL environment and their overloads, as cel-go's checker
//! resolves them: CEL's standard declarations (cel-go `common/stdlib/standard.go`) without the
//! cross-type `<`/`<=`/`>`/`>=` (cel-go disables those unless `CrossTypeNumericComparisons` is
//! turned on, and Karpenter does not), plus Karpenter's `max` and `min` over two ints or
//! doubles. No extension library.
//!
//! A call resolves as in cel-go: every overload of its style (global or method) whose parameters
//! the arguments fit is a match; the first match gives the result type, and a later match with
//! another result type makes it `dyn`. No match is a compile error.

use cel::common::ast::operators;

use super::types::{Bindings, Ty};

/// A parameter or result type of a declaration; `A` and `B` are type parameters, fresh for
/// each overload tried.
#[derive(Debug, Clone, Copy)]
enum Spec {
    Int,
    Uint,
    Double,
    Bool,
    String,
    Bytes,
    Duration,
    Timestamp,
    Dyn,
    Type,
    A,
    B,
    ListA,
    MapAB,
}

/// One overload: whether it is a method (the receiver is its first parameter), its parameters
/// and its result.
#[derive(Debug)]
pub struct Overload {
    member: bool,
    params: &'static [Spec],
    result: Spec,
}

const fn global(params: &'static [Spec], result: Spec) -> Overload {
    Overload {
        member: false,
        params,
        result,
    }
}

const fn method(params: &'static [Spec], result: Spec) -> Overload {
    Overload {
        member: true,
        params,
        result,
    }
}

use Spec::{A, B, Bool, Bytes, Double, Duration, Dyn, Int, ListA, MapAB, String, Timestamp, Type, Uint};

const CONDITIONAL: &[Overload] = &[global(&[Bool, A, A], A)];
const LOGIC: &[Overload] = &[global(&[Bool, Bool], Bool)];
const NOT: &[Overload] = &[global(&[Bool], Bool)];
const EQUALITY: &[Overload] = &[global(&[A, A], Bool)];
const ADD: &[Overload] = &[
    global(&[Bytes, Bytes], Bytes),
    global(&[Double, Double], Double),
    global(&[Duration, Duration], Duration),
    global(&[Duration, Timestamp], Timestamp),
    global(&[Timestamp, Duration], Timestamp),
    global(&[Int, Int], Int),
    global(&[ListA, ListA], ListA),
    global(&[String, String], String),
    global(&[Uint, Uint], Uint),
];
const SUBTRACT: &[Overload] = &[
    global(&[Double, Double], Double),
    global(&[Duration, Duration], Duration),
    global(&[Int, Int], Int),
    global(&[Timestamp, Duration], Timestamp),
    global(&[Timestamp, Timestamp], Duration),
    global(&[Uint, Uint], Uint),
];
const MULTIPLY_DIVIDE: &[Overload] = &[
    global(&[Double, Double], Double),
    global(&[Int, Int], Int),
    global(&[Uint, Uint], Uint),
];
const MODULO: &[Overload] = &[global(&[Int, Int], Int), global(&[Uint, Uint], Uint)];
const NEGATE: &[Overload] = &[global(&[Double], Double), global(&[Int], Int)];
/// Only the same-type pairs: the cross-type ones are disabled in Karpenter's environment.
const ORDER: &[Overload] = &[
    global(&[Bool, Bool], Bool),
    global(&[Int, Int], Bool),
    global(&[Uint, Uint], Bool),
    global(&[Double, Double], Bool),
    global(&[String, String], Bool),
    global(&[Bytes, Bytes], Bool),
    global(&[Timestamp, Timestamp], Bool),
    global(&[Duration, Duration], Bool),
];
const INDEX: &[Overload] = &[global(&[ListA, Int], A), global(&[MapAB, A], B)];
const IN: &[Overload] = &[global(&[A, ListA], Bool), global(&[A, MapAB], Bool)];
const SIZE: &[Overload] = &[
    global(&[Bytes], Int),
    method(&[Bytes], Int),
    global(&[ListA], Int),
    method(&[ListA], Int),
    global(&[MapAB], Int),
    method(&[MapAB], Int),
    global(&[String], Int),
    method(&[String], Int),
];
const TYPE: &[Overload] = &[global(&[A], Type)];
const DYN: &[Overload] = &[global(&[A], Dyn)];
const TO_BOOL: &[Overload] = &[global(&[Bool], Bool), global(&[String], Bool)];
const TO_BYTES: &[Overload] = &[global(&[Bytes], Bytes), global(&[String], Bytes)];
const TO_DOUBLE: &[Overload] = &[
    global(&[Double], Double),
    global(&[Int], Double),
    global(&[String], Double),
    global(&[Uint], Double),
];
/// No int → duration: cel-go removed it (#1300), first in v0.28.1.
const TO_DURATION: &[Overload] = &[global(&[Duration], Duration), global(&[String], Duration)];
const TO_INT: &[Overload] = &[
    global(&[Int], Int),
    global(&[Double], Int),
    global(&[Duration], Int),
    global(&[String], Int),
    global(&[Timestamp], Int),
    global(&[Uint], Int),
];
const TO_STRING: &[Overload] = &[
    global(&[String], String),
    global(&[Bool], String),
    global(&[Bytes], String),
    global(&[Double], String),
    global(&[Duration], String),
    global(&[Int], String),
    global(&[Timestamp], String),
    global(&[Uint], String),
];
const TO_TIMESTAMP: &[Overload] = &[
    global(&[Timestamp], Timestamp),
    global(&[Int], Timestamp),
    global(&[String], Timestamp),
];
const TO_UINT: &[Overload] = &[
    global(&[Uint], Uint),
    global(&[Double], Uint),
    global(&[Int], Uint),
    global(&[String], Uint),
];
const STRING_TEST: &[Overload] = &[method(&[String, String], Bool)];
const MATCHES: &[Overload] = &[global(&[String, String], Bool), method(&[String, String], Bool)];
/// The date accessors: timestamps only, with an optional time zone.
const DATE: &[Overload] = &[method(&[Timestamp], Int), method(&[Timestamp, String], Int)];
/// The time-of-day accessors: timestamps (optional time zone) and durations (none).
const TIME: &[Overload] = &[
    method(&[Timestamp], Int),
    method(&[Timestamp, String], Int),
    method(&[Duration], Int),
];
/// Karpenter's `max`/`min`: two ints give an int, any double a double.
const MAX_MIN: &[Overload] = &[
    global(&[Int, Int], Int),
    global(&[Double, Double], Double),
    global(&[Int, Double], Double),
    global(&[Double, Int], Double),
];

/// The date accessors of timestamps.
pub const DATE_ACCESSORS: &[&str] = &[
    "getFullYear",
    "getMonth",
    "getDayOfYear",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
];

/// The time-of-day accessors, of timestamps and durations.
pub const TIME_ACCESSORS: &[&str] = &["getHours", "getMinutes", "getSeconds", "getMilliseconds"];

/// The overloads of a function (or operator) Karpenter's environment declares.
pub fn overloads(name: &str) -> Option<&'static [Overload]> {
    Some(match name {
        operators::CONDITIONAL => CONDITIONAL,
        operators::LOGICAL_AND | operators::LOGICAL_OR => LOGIC,
        operators::LOGICAL_NOT | operators::NOT_STRICTLY_FALSE => NOT,
        operators::EQUALS | operators::NOT_EQUALS => EQUALITY,
        operators::ADD => ADD,
        operators::SUBSTRACT => SUBTRACT,
        operators::MULTIPLY | operators::DIVIDE => MULTIPLY_DIVIDE,
        operators::MODULO => MODULO,
        operators::NEGATE => NEGATE,
        operators::LESS | operators::LESS_EQUALS | operators::GREATER | operators::GREATER_EQUALS => ORDER,
        operators::INDEX => INDEX,
        operators::IN => IN,
        "size" => SIZE,
        "type" => TYPE,
        "dyn" => DYN,
        "bool" => TO_BOOL,
        "bytes" => TO_BYTES,
        "double" => TO_DOUBLE,
        "duration" => TO_DURATION,
        "int" => TO_INT,
        "string" => TO_STRING,
        "timestamp" => TO_TIMESTAMP,
        "uint" => TO_UINT,
        "contains" | "startsWith" | "endsWith" => STRING_TEST,
        "matches" => MATCHES,
        "max" | "min" => MAX_MIN,
        name if DATE_ACCESSORS.contains(&name) => DATE,
        name if TIME_ACCESSORS.contains(&name) => TIME,
        _ => return None,
    })
}

/// Whether some overload has this call style and number of arguments (the receiver counted
/// for a method).
pub fn has_shape(overloads: &[Overload], member: bool, arguments: usize) -> bool {
    overloads
        .iter()
        .any(|o| o.member == member && o.params.len() == arguments)
}

/// The argument counts (the receiver not counted) of the overloads of one call style, each once.
pub fn arities(overloads: &[Overload], member: bool) -> Vec<usize> {
    let mut counts: Vec<usize> = overloads
        .iter()
        .filter(|o| o.member == member)
        .map(|o| o.params.len() - usize::from(member))
        .collect();
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// The type a declaration's `spec` stands for, given the overload's fresh parameters.
fn instantiate(spec: Spec, a: &Ty, b: &Ty) -> Ty {
    match spec {
        Spec::Int => Ty::Int,
        Spec::Uint => Ty::Uint,
        Spec::Double => Ty::Double,
        Spec::Bool => Ty::Bool,
        Spec::String => Ty::String,
        Spec::Bytes => Ty::Bytes,
        Spec::Duration => Ty::Duration,
        Spec::Timestamp => Ty::Timestamp,
        Spec::Dyn => Ty::Dyn,
        Spec::Type => Ty::Type,
        Spec::A => a.clone(),
        Spec::B => b.clone(),
        Spec::ListA => Ty::List(Box::new(a.clone())),
        Spec::MapAB => Ty::Map(Box::new(a.clone()), Box::new(b.clone())),
    }
}

/// The result type of a call whose arguments (the receiver first, for a method) have the types
/// `arguments`, or `None` when no overload matches.
pub fn resolve(
    bindings: &mut Bindings,
    overloads: &[Overload],
    member: bool,
    arguments: &[Ty],
) -> Option<Ty> {
    let mut result: Option<Ty> = None;
    for overload in overloads.iter().filter(|o| o.member == member) {
        let (a, b) = (bindings.fresh(), bindings.fresh());
        let params: Vec<Ty> = overload.params.iter().map(|s| instantiate(*s, &a, &b)).collect();
        if !bindings.all_assignable(arguments, &params) {
            continue;
        }
        let found = bindings.substitute(&instantiate(overload.result, &a, &b), false);
        result = Some(match result {
            None => found,
            Some(Ty::Dyn) => Ty::Dyn,
            Some(first) if first == found => first,
            Some(_) => Ty::Dyn,
        });
    }
    result
}
