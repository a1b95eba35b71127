//! CEL's types as cel-go's checker sees them, and its rule for when a value of one type may
//! stand where another is expected. Restated from cel-go's `checker/types.go` (read at the
//! snapshot the research notes name, 18 commits after v0.28.1):
//!
//! - a type parameter (`A` of `_==_(A, A)`, the element type of an empty list) is bound to the
//!   first type it meets, and later types must be assignable to that binding; when they are, the
//!   binding becomes the more general of the two (so `dyn` wins over `int`);
//! - `dyn` is assignable both ways, `null` only to `null`, durations and timestamps (not to a
//!   number or a string), every type value to every other;
//! - otherwise the kinds must be the same, element types of lists and maps assignable in turn.

/// A CEL type as the check follows it.
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
    /// Known only when the expression runs: `dyn(x)`, the elements of `[1, 2.0]`, `max` of a
    /// `dyn` and an int. Karpenter refuses an expression of this type.
    Dyn,
    /// A type parameter, bound or not in [`Bindings`]; unbound at the end, it is `dyn`.
    Param(usize),
}

impl Ty {
    /// The type as CEL names it, for messages (an unbound parameter is `dyn`).
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
            Ty::Dyn | Ty::Param(_) => "dyn".into(),
        }
    }

    /// `int`, `uint` or `double`.
    pub fn numeric(&self) -> bool {
        matches!(self, Ty::Int | Ty::Uint | Ty::Double)
    }

    /// Whether `null` may stand for a value of this type (cel-go's nullable kinds that this
    /// environment has: durations and timestamps; and `null` itself).
    fn nullable(&self) -> bool {
        matches!(self, Ty::Null | Ty::Duration | Ty::Timestamp)
    }
}

/// The article and name of a type: "an int", "a double".
pub fn a(t: &Ty) -> String {
    let name = t.name();
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) && !name.starts_with("uint") {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// Whether `general` is `specific` or less specific (through `dyn` or an unbound parameter).
fn no_more_specific(general: &Ty, specific: &Ty) -> bool {
    match (general, specific) {
        (Ty::Dyn | Ty::Param(_), _) => true,
        (_, Ty::Dyn | Ty::Param(_)) => false,
        (Ty::List(g), Ty::List(s)) => no_more_specific(g, s),
        (Ty::Map(gk, gv), Ty::Map(sk, sv)) => no_more_specific(gk, sk) && no_more_specific(gv, sv),
        (Ty::Type, Ty::Type) => true,
        (g, s) => g == s,
    }
}

/// The more general of two types known to fit each other (the first when both are as general).
pub fn more_general(t1: &Ty, t2: &Ty) -> Ty {
    if no_more_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

/// The type parameters met so far and what each is bound to.
#[derive(Debug, Clone, Default)]
pub struct Bindings {
    bound: Vec<Option<Ty>>,
}

impl Bindings {
    /// A new, unbound type parameter.
    pub fn fresh(&mut self) -> Ty {
        self.bound.push(None);
        Ty::Param(self.bound.len() - 1)
    }

    fn binding(&self, param: usize) -> Option<&Ty> {
        self.bound.get(param).and_then(Option::as_ref)
    }

    fn bind(&mut self, param: usize, t: Ty) {
        if let Some(slot) = self.bound.get_mut(param) {
            *slot = Some(t);
        }
    }

    /// `t` with every bound parameter replaced by its binding; unbound ones become `dyn` when
    /// `unbound_to_dyn` (as at the end of the check).
    pub fn substitute(&self, t: &Ty, unbound_to_dyn: bool) -> Ty {
        match t {
            Ty::Param(p) => match self.binding(*p) {
                Some(bound) => self.substitute(bound, unbound_to_dyn),
                None if unbound_to_dyn => Ty::Dyn,
                None => t.clone(),
            },
            Ty::List(e) => Ty::List(Box::new(self.substitute(e, unbound_to_dyn))),
            Ty::Map(k, v) => Ty::Map(
                Box::new(self.substitute(k, unbound_to_dyn)),
                Box::new(self.substitute(v, unbound_to_dyn)),
            ),
            other => other.clone(),
        }
    }

    /// Whether `t1` may stand where `t2` is expected, binding parameters as it goes; nothing
    /// is bound when not.
    pub fn assignable(&mut self, t1: &Ty, t2: &Ty) -> bool {
        let mut trial = self.clone();
        let fits = trial.fits(t1, t2);
        if fits {
            *self = trial;
        }
        fits
    }

    /// [`Bindings::assignable`] for each pair of two lists of the same length.
    pub fn all_assignable(&mut self, l1: &[Ty], l2: &[Ty]) -> bool {
        if l1.len() != l2.len() {
            return false;
        }
        let mut trial = self.clone();
        let fits = l1.iter().zip(l2).all(|(t1, t2)| trial.fits(t1, t2));
        if fits {
            *self = trial;
        }
        fits
    }

    /// cel-go's `internalIsAssignable`: binds as it goes, even when the answer is no.
    fn fits(&mut self, t1: &Ty, t2: &Ty) -> bool {
        if let Ty::Param(p2) = t2 {
            let (valid, has_binding) = self.substitutes(t1, *p2);
            if valid {
                return true;
            }
            if has_binding {
                return false;
            }
        }
        if let Ty::Param(p1) = t1 {
            return self.substitutes(t2, *p1).0;
        }
        match (t1, t2) {
            (Ty::Dyn, _) | (_, Ty::Dyn) => true,
            (Ty::Null, other) | (other, Ty::Null) => other.nullable(),
            (Ty::Type, other) => *other == Ty::Type,
            (Ty::List(e1), Ty::List(e2)) => self.fits(e1, e2),
            (Ty::Map(k1, v1), Ty::Map(k2, v2)) => self.fits(k1, k2) && self.fits(v1, v2),
            (Ty::List(_) | Ty::Map(..), _) => false,
            (t1, t2) => std::mem::discriminant(t1) == std::mem::discriminant(t2),
        }
    }

    /// Whether the parameter `param` can stand for `t` (binding it, or widening its binding),
    /// and whether it was bound already.
    fn substitutes(&mut self, t: &Ty, param: usize) -> (bool, bool) {
        if *t == Ty::Param(param) {
            return (true, true);
        }
        if let Some(bound) = self.binding(param).cloned() {
            if *t == bound {
                return (true, true);
            }
            if self.fits(t, &bound) {
                let widened = more_general(t, &bound);
                if self.absent_from(param, &widened) {
                    self.bind(param, widened);
                }
                return (true, true);
            }
            return (false, true);
        }
        if self.absent_from(param, t) {
            self.bind(param, t.clone());
            return (true, false);
        }
        (false, false)
    }

    /// The occurs check: whether `param` appears nowhere in `within`, bindings followed (so no
    /// parameter is ever bound to a type containing itself).
    fn absent_from(&self, param: usize, within: &Ty) -> bool {
        match within {
            Ty::Param(p) if *p == param => false,
            Ty::Param(p) => self
                .binding(*p)
                .is_none_or(|bound| self.absent_from(param, bound)),
            Ty::List(e) => self.absent_from(param, e),
            Ty::Map(k, v) => self.absent_from(param, k) && self.absent_from(param, v),
            _ => true,
        }
    }
}
