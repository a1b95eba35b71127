//! Property tests of the codecs: random types, random values of those types (nulls, unknowns
//! with fitting refinements, dynamic values with typed nulls and unknowns, big and fractional
//! numbers), round trips through msgpack and JSON, and decoders fed random or mangled bytes
//! that must answer `Ok` or `Err` without panicking.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::strategy::Union;

use super::{Number, Refinements, Type, Value, json, msgpack};

fn arb_type(allow_dynamic: bool) -> BoxedStrategy<Type> {
    let mut leaves = vec![Just(Type::String), Just(Type::Number), Just(Type::Bool)];
    if allow_dynamic {
        leaves.push(Just(Type::Dynamic));
    }
    Union::new(leaves)
        .prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(Type::list),
                inner.clone().prop_map(Type::set),
                inner.clone().prop_map(Type::map),
                btree_map("[a-z_]{1,3}", inner.clone(), 0..4).prop_map(Type::Object),
                vec(inner, 0..3).prop_map(Type::Tuple),
            ]
        })
        .boxed()
}

#[derive(Clone, Copy)]
struct Opts {
    unknowns: bool,
    infinities: bool,
    /// How many more dynamic slots may open a new random type below this point.
    dynamic_budget: u32,
}

fn arb_number(infinities: bool) -> BoxedStrategy<Number> {
    let mut choices = vec![
        any::<i64>().prop_map(Number::from_i64).boxed(),
        (-1000i64..1000).prop_map(Number::from_i64).boxed(),
        any::<u64>().prop_map(Number::from_u64).boxed(),
        any::<f64>()
            .prop_filter_map("finite floats", |f| {
                if f.is_finite() { Number::from_f64(f) } else { None }
            })
            .boxed(),
        ("-?[1-9][0-9]{0,40}", -450i64..450)
            .prop_filter_map("decimal", |(digits, exp)| {
                Number::parse(&format!("{digits}e{exp}"))
            })
            .boxed(),
        prop_oneof![
            Just("1e400"),
            Just("123456789012345678901234567890"),
            Just("0.1"),
            Just("-2.5"),
            Just("1e5000"),
            Just("18446744073709551615"),
        ]
        .prop_filter_map("fixed", Number::parse)
        .boxed(),
    ];
    if infinities {
        choices.push(
            prop_oneof![
                Just(Number::positive_infinity()),
                Just(Number::negative_infinity())
            ]
            .boxed(),
        );
    }
    Union::new(choices).boxed()
}

/// Numbers short enough that a refinement bound keeps them (see `MAX_BOUND_BYTES`).
fn arb_small_number() -> BoxedStrategy<Number> {
    prop_oneof![
        (-1000i64..1000).prop_map(Number::from_i64),
        ("-?[0-9]{1,6}\\.[0-9]{1,6}").prop_filter_map("decimal", |s| Number::parse(&s)),
    ]
    .boxed()
}

/// Refinements that cty could carry for `ty`.
fn arb_refinements(ty: &Type) -> BoxedStrategy<Refinements> {
    let nullable = prop::option::of(Just(false));
    match ty {
        Type::Dynamic => Just(Refinements::default()).boxed(),
        Type::String => (nullable, prop::option::of("\\PC{1,5}"))
            .prop_map(|(nullable, string_prefix)| Refinements {
                nullable,
                string_prefix,
                ..Default::default()
            })
            .boxed(),
        Type::Number => (
            nullable,
            prop::option::of((arb_small_number(), any::<bool>())),
            prop::option::of((arb_small_number(), any::<bool>())),
        )
            .prop_map(|(nullable, number_lower, number_upper)| Refinements {
                nullable,
                number_lower,
                number_upper,
                ..Default::default()
            })
            .boxed(),
        Type::List(_) | Type::Set(_) | Type::Map(_) => (
            nullable,
            prop::option::of(0u64..10),
            prop::option::of(any::<u64>()),
        )
            .prop_map(|(nullable, length_lower, length_upper)| Refinements {
                nullable,
                length_lower,
                length_upper,
                ..Default::default()
            })
            .boxed(),
        _ => nullable
            .prop_map(|nullable| Refinements {
                nullable,
                ..Default::default()
            })
            .boxed(),
    }
}

fn arb_value(ty: &Type, opts: Opts) -> BoxedStrategy<Value> {
    let mut choices = vec![(1, Just(Value::Null).boxed()), (6, arb_known(ty, opts))];
    if opts.unknowns {
        choices.push((
            1,
            arb_refinements(ty)
                .prop_map(|r| Value::Unknown(Box::new(r)))
                .boxed(),
        ));
    }
    Union::new_weighted(choices).boxed()
}

fn arb_known(ty: &Type, opts: Opts) -> BoxedStrategy<Value> {
    match ty {
        Type::String => "(?s).{0,8}".prop_map(Value::String).boxed(),
        Type::Number => arb_number(opts.infinities).prop_map(Value::Number).boxed(),
        Type::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Type::List(ety) => vec(arb_value(ety, opts), 0..3).prop_map(Value::List).boxed(),
        Type::Set(ety) => vec(arb_value(ety, opts), 0..3).prop_map(Value::Set).boxed(),
        Type::Map(ety) => btree_map("\\PC{0,4}", arb_value(ety, opts), 0..3)
            .prop_map(Value::Map)
            .boxed(),
        Type::Object(attrs) => attrs
            .iter()
            .map(|(name, aty)| {
                let name = name.clone();
                arb_value(aty, opts).prop_map(move |v| (name.clone(), v))
            })
            .collect::<Vec<_>>()
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect()))
            .boxed(),
        Type::Tuple(etys) => etys
            .iter()
            .map(|ety| arb_value(ety, opts))
            .collect::<Vec<_>>()
            .prop_map(Value::Tuple)
            .boxed(),
        Type::Dynamic => {
            let types = if opts.dynamic_budget == 0 {
                Just(Type::String).boxed()
            } else {
                arb_type(true)
                    .prop_map(|t| if t == Type::Dynamic { Type::Number } else { t })
                    .boxed()
            };
            let inner_opts = Opts {
                dynamic_budget: opts.dynamic_budget.saturating_sub(1),
                ..opts
            };
            types
                .prop_flat_map(move |t| {
                    let wrapper_ty = t.clone();
                    arb_value(&t, inner_opts)
                        .prop_map(move |v| Value::Dynamic(Box::new(wrapper_ty.clone()), Box::new(v)))
                })
                .boxed()
        }
    }
}

fn typed_value(opts: Opts) -> impl Strategy<Value = (Type, Value)> {
    arb_type(true).prop_flat_map(move |ty| {
        let v = arb_value(&ty, opts);
        (Just(ty), v)
    })
}

const WITH_UNKNOWNS: Opts = Opts {
    unknowns: true,
    infinities: true,
    dynamic_budget: 2,
};
const JSON_SAFE: Opts = Opts {
    unknowns: false,
    infinities: false,
    dynamic_budget: 2,
};

/// Bytes that are mostly msgpack markers the decoder cares about, to get past the first byte.
fn msgpackish_bytes() -> impl Strategy<Value = Vec<u8>> {
    let interesting = prop::sample::select(vec![
        0x00u8, 0x01, 0x7f, 0x80, 0x81, 0x82, 0x90, 0x91, 0x92, 0x93, 0xa1, 0xa3, 0xc0, 0xc2, 0xc3, 0xc4,
        0xc7, 0xca, 0xcb, 0xcc, 0xcf, 0xd3, 0xd4, 0xd5, 0xd9, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff, 0x0c, b'"',
        b's', b'[',
    ]);
    vec(prop_oneof![interesting, any::<u8>()], 0..48)
}

/// Bytes made mostly of JSON punctuation and type-JSON words, to reach past the first token.
fn jsonish_bytes() -> impl Strategy<Value = Vec<u8>> {
    let token = prop::sample::select(vec![
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        "\"",
        "null",
        "true",
        "false",
        "0",
        "-1.5e3",
        "1e400",
        "\"string\"",
        "\"number\"",
        "\"bool\"",
        "\"dynamic\"",
        "\"list\"",
        "\"set\"",
        "\"map\"",
        "\"object\"",
        "\"tuple\"",
        "\"type\"",
        "\"value\"",
        "\"a\"",
        "\\u00e9",
        "\\ud800",
        " ",
    ]);
    vec(
        prop_oneof![token.prop_map(|t| t.as_bytes().to_vec()), vec(any::<u8>(), 1..2)],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn msgpack_round_trips((ty, v) in typed_value(WITH_UNKNOWNS)) {
        prop_assert!(v.conforms_to(&ty).is_ok());
        let bytes = msgpack::encode(&v, &ty).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = msgpack::decode(&bytes, &ty).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back, v);
    }

    #[test]
    fn json_round_trips((ty, v) in typed_value(JSON_SAFE)) {
        let bytes = json::encode(&v, &ty).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let strict = json::decode(&bytes, &ty).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&strict, &v);
        let lenient = json::decode_lenient(&bytes, &ty).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&lenient, &v);
        // The same value also survives msgpack, and both paths agree.
        let packed = msgpack::encode(&v, &ty).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(msgpack::decode(&packed, &ty).ok(), Some(v));
    }

    #[test]
    fn type_json_round_trips(ty in arb_type(true)) {
        prop_assert_eq!(Type::from_json(&ty.to_json()).ok(), Some(ty));
    }

    #[test]
    fn numbers_round_trip_through_text(n in arb_number(true)) {
        prop_assert_eq!(Number::parse(&n.to_string()), Some(n));
    }

    #[test]
    fn random_bytes_never_panic(ty in arb_type(true), bytes in msgpackish_bytes()) {
        let _ = msgpack::decode(&bytes, &ty);
        let _ = json::decode(&bytes, &ty);
        let _ = json::decode_lenient(&bytes, &ty);
        let _ = Type::from_json(&bytes);
    }

    #[test]
    fn random_json_never_panics(ty in arb_type(true), bytes in jsonish_bytes()) {
        let _ = json::decode(&bytes, &ty);
        let _ = json::decode_lenient(&bytes, &ty);
        let _ = Type::from_json(&bytes);
    }

    #[test]
    fn mangled_encodings_never_panic(
        (ty, v) in typed_value(WITH_UNKNOWNS),
        edits in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let Ok(mut bytes) = msgpack::encode(&v, &ty) else {
            return Err(TestCaseError::fail("generated value did not encode"));
        };
        let _ = msgpack::decode(&bytes[..cut.index(bytes.len() + 1)], &ty);
        for (at, byte) in &edits {
            let i = at.index(bytes.len());
            bytes[i] = *byte;
        }
        let _ = msgpack::decode(&bytes, &ty);
        if let Ok(mut text) = json::encode(&v, &ty) {
            let _ = json::decode(&text[..cut.index(text.len() + 1)], &ty);
            for (at, byte) in &edits {
                let i = at.index(text.len());
                text[i] = *byte;
            }
            let _ = json::decode(&text, &ty);
            let _ = json::decode_lenient(&text, &ty);
        }
    }
}
