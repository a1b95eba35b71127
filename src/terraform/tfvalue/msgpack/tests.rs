use std::collections::BTreeMap;

use super::*;
use crate::terraform::tfvalue::{AttributePath, MAX_DEPTH, Number, PathStep, Refinements, Type, Value};

fn hex(s: &str) -> Vec<u8> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..clean.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&clean[i..i + 2], 16).unwrap())
        .collect()
}

fn num(s: &str) -> Value {
    Value::Number(Number::parse(s).unwrap())
}

fn round_trip(v: &Value, ty: &Type) {
    let bytes = encode(v, ty).unwrap();
    assert_eq!(&decode(&bytes, ty).unwrap(), v, "bytes {bytes:02x?}");
}

#[test]
fn null_and_unknown_bytes() {
    assert_eq!(encode(&Value::Null, &Type::String).unwrap(), [0xc0]);
    assert_eq!(encode(&Value::unknown(), &Type::String).unwrap(), [0xd4, 0, 0]);
    assert_eq!(decode(&[0xc0], &Type::list(Type::Number)).unwrap(), Value::Null);
    assert_eq!(decode(&[0xd4, 0, 0], &Type::Number).unwrap(), Value::unknown());
    // Any ext code with a payload of at most one byte is a plain unknown.
    assert_eq!(decode(&[0xc7, 0, 0], &Type::Bool).unwrap(), Value::unknown());
    assert_eq!(decode(&[0xd4, 7, 9], &Type::Dynamic).unwrap(), Value::unknown());
    assert_eq!(decode(&[0xd4, 12, 0], &Type::String).unwrap(), Value::unknown());
    // A longer payload needs code 12.
    let e = decode(&[0xd5, 3, 0x81, 0x01], &Type::String).unwrap_err();
    assert!(e.message.contains("extension type 3"), "{e}");
}

#[test]
fn refined_unknown_string_decodes() {
    // ext 12, payload {1: false, 2: "ab"}
    let bytes = hex("c7 07 0c 82 01 c2 02 a2 61 62");
    let v = decode(&bytes, &Type::String).unwrap();
    assert_eq!(
        v,
        Value::Unknown(Box::new(Refinements {
            nullable: Some(false),
            string_prefix: Some("ab".into()),
            ..Default::default()
        }))
    );
    assert_eq!(encode(&v, &Type::String).unwrap(), bytes);
}

#[test]
fn refined_unknown_number_and_collection() {
    // {3: [1, true], 4: [1.5 as float64, false]}: 17 payload bytes.
    let v = Value::Unknown(Box::new(Refinements {
        number_lower: Some((Number::from_i64(1), true)),
        number_upper: Some((Number::parse("1.5").unwrap(), false)),
        ..Default::default()
    }));
    let bytes = encode(&v, &Type::Number).unwrap();
    assert_eq!(bytes[..3], [0xc7, 17, 12]);
    assert_eq!(decode(&bytes, &Type::Number).unwrap(), v);
    // Not-null only: fixext2 is not used for a 3-byte payload: c7 03 0c 81 01 c2.
    let nn = Value::Unknown(Box::new(Refinements {
        nullable: Some(false),
        ..Default::default()
    }));
    assert_eq!(encode(&nn, &Type::Bool).unwrap(), hex("c7 03 0c 81 01 c2"));
    let lengths = Value::Unknown(Box::new(Refinements {
        length_lower: Some(1),
        length_upper: Some(3),
        ..Default::default()
    }));
    assert_eq!(
        encode(&lengths, &Type::list(Type::String)).unwrap(),
        hex("c7 05 0c 82 05 01 06 03")
    );
    round_trip(&lengths, &Type::map(Type::Bool));
}

#[test]
fn refinements_that_do_not_fit_the_type() {
    // A prefix on a number is an error on input (as in cty) ...
    let e = decode(&hex("c7 04 0c 81 02 a1 61"), &Type::Number).unwrap_err();
    assert!(e.message.contains("string prefix"), "{e}");
    // ... and left out on output.
    let v = Value::Unknown(Box::new(Refinements {
        string_prefix: Some("x".into()),
        ..Default::default()
    }));
    assert_eq!(encode(&v, &Type::Number).unwrap(), [0xd4, 0, 0]);
    // Dynamic unknowns never carry refinements; incoming ones are ignored.
    assert_eq!(
        decode(&hex("c7 03 0c 81 01 c2"), &Type::Dynamic).unwrap(),
        Value::unknown()
    );
    // Unknown keys are skipped, nested values included.
    assert_eq!(
        decode(&hex("c7 09 0c 82 63 92 01 81 01 02 01 c2"), &Type::Bool).unwrap(),
        Value::Unknown(Box::new(Refinements {
            nullable: Some(false),
            ..Default::default()
        }))
    );
    // "definitely null" collapses to null.
    assert_eq!(
        decode(&hex("c7 03 0c 81 01 c3"), &Type::Bool).unwrap(),
        Value::Null
    );
    let definitely_null = Value::Unknown(Box::new(Refinements {
        nullable: Some(true),
        ..Default::default()
    }));
    assert_eq!(encode(&definitely_null, &Type::Bool).unwrap(), [0xc0]);
    // Oversized payloads are refused.
    let mut big = vec![0xc8, 0x04, 0x01, 12, 0x81, 0x02, 0xda, 0x03, 0xfc];
    big.extend(std::iter::repeat_n(b'a', 0x3fc));
    assert!(
        decode(&big, &Type::String)
            .unwrap_err()
            .message
            .contains("too large")
    );
}

#[test]
fn long_prefixes_are_cut_before_an_ascii_character() {
    let long = format!("{}é{}", "a".repeat(255), "b".repeat(300));
    let v = Value::Unknown(Box::new(Refinements {
        string_prefix: Some(long),
        ..Default::default()
    }));
    let back = decode(&encode(&v, &Type::String).unwrap(), &Type::String).unwrap();
    let Value::Unknown(r) = back else {
        panic!("not unknown")
    };
    assert_eq!(r.string_prefix.as_deref(), Some(&*"a".repeat(254)));
}

/// Fuzz crash (tfvalue_msgpack, fuzz/corpus/tfvalue_msgpack/crash-8918bd23…): a refined
/// unknown string whose prefix is empty, `d7 0c 81 02 a0 …`, decoded with `Some("")` but
/// re-encoded without the (meaningless) prefix, so the round trip changed the value.
#[test]
fn decoded_refinements_re_encode_to_themselves() {
    let empty_prefix = [0xd7, 0x0c, 0x81, 0x02, 0xa0, 0x27, 0x37, 0x3d, 0x00, 0x3b];
    let v = decode(&empty_prefix, &Type::String).unwrap();
    assert_eq!(v, Value::unknown());
    assert_eq!(
        decode(&encode(&v, &Type::String).unwrap(), &Type::String).unwrap(),
        v
    );

    // A refined unknown (extension 12) with a one-entry map: key, then the value's bytes.
    let refined = |key: u8, value: &[u8]| {
        let mut payload = vec![0x81, key];
        payload.extend_from_slice(value);
        let mut bytes = vec![0xc8];
        bytes.extend_from_slice(&u16::try_from(payload.len()).unwrap().to_be_bytes());
        bytes.push(0x0c);
        bytes.extend_from_slice(&payload);
        bytes
    };
    let str16 = |text: &str| {
        let mut out = vec![0xda];
        out.extend_from_slice(&u16::try_from(text.len()).unwrap().to_be_bytes());
        out.extend_from_slice(text.as_bytes());
        out
    };

    // A prefix longer than the encoder writes is cut on the way in as well.
    let v = decode(&refined(0x02, &str16(&"a".repeat(300))), &Type::String).unwrap();
    let Value::Unknown(r) = &v else {
        panic!("not unknown: {v:?}")
    };
    assert_eq!(r.string_prefix.as_deref(), Some(&*"a".repeat(256)));
    assert_eq!(
        decode(&encode(&v, &Type::String).unwrap(), &Type::String).unwrap(),
        v
    );

    // A number bound too long to write back is left out on the way in.
    let mut bound = vec![0x92];
    bound.extend_from_slice(&str16(&"9".repeat(500)));
    bound.push(0xc3);
    let bytes = refined(0x03, &bound);
    let v = decode(&bytes, &Type::Number).unwrap();
    assert_eq!(v, Value::unknown());
    assert_eq!(
        decode(&encode(&v, &Type::Number).unwrap(), &Type::Number).unwrap(),
        v
    );
}

#[test]
fn numbers_use_int_float_or_string() {
    assert_eq!(encode(&num("1"), &Type::Number).unwrap(), [0x01]);
    assert_eq!(encode(&num("1.0"), &Type::Number).unwrap(), [0x01]);
    assert_eq!(encode(&num("-1"), &Type::Number).unwrap(), [0xff]);
    assert_eq!(encode(&num("200"), &Type::Number).unwrap(), [0xcc, 200]);
    assert_eq!(encode(&num("-200"), &Type::Number).unwrap(), hex("d1 ff 38"));
    assert_eq!(
        encode(&num("-9223372036854775808"), &Type::Number).unwrap(),
        hex("d3 80 00 00 00 00 00 00 00")
    );
    let mut half = vec![0xcb];
    half.extend(0.5f64.to_be_bytes());
    assert_eq!(encode(&num("0.5"), &Type::Number).unwrap(), half);
    let mut e20 = vec![0xcb];
    e20.extend(1e20f64.to_be_bytes());
    assert_eq!(encode(&num("1e20"), &Type::Number).unwrap(), e20);
    let mut tenth = vec![0xa3];
    tenth.extend(b"0.1");
    assert_eq!(encode(&num("0.1"), &Type::Number).unwrap(), tenth);
    let big = "123456789012345678901234567890";
    let mut big_bytes = vec![0xbe];
    big_bytes.extend(big.as_bytes());
    assert_eq!(encode(&num(big), &Type::Number).unwrap(), big_bytes);
    for s in [big, "1e400", "-1e-400", "0.1", "18446744073709551615", "1e5000"] {
        round_trip(&num(s), &Type::Number);
    }
    let mut inf = vec![0xcb];
    inf.extend(f64::INFINITY.to_be_bytes());
    assert_eq!(
        encode(&Value::Number(Number::positive_infinity()), &Type::Number).unwrap(),
        inf
    );
    round_trip(&Value::Number(Number::negative_infinity()), &Type::Number);
}

#[test]
fn numbers_decode_from_every_form() {
    assert_eq!(decode(&[0x05], &Type::Number).unwrap(), num("5"));
    assert_eq!(
        decode(&hex("cf ff ff ff ff ff ff ff ff"), &Type::Number).unwrap(),
        num("18446744073709551615")
    );
    assert_eq!(decode(&hex("d0 80"), &Type::Number).unwrap(), num("-128"));
    assert_eq!(decode(&hex("ca 3f c0 00 00"), &Type::Number).unwrap(), num("1.5"));
    assert_eq!(
        decode(&hex("a4 31 65 34 30"), &Type::Number).unwrap(),
        num("1e40")
    );
    assert!(decode(&hex("a3 61 62 63"), &Type::Number).is_err());
    let mut nan = vec![0xcb];
    nan.extend(f64::NAN.to_be_bytes());
    assert!(decode(&nan, &Type::Number).unwrap_err().message.contains("NaN"));
    let mut plain400 = vec![0xda, 0x01, 0x91];
    plain400.push(b'1');
    plain400.extend(std::iter::repeat_n(b'0', 400));
    assert_eq!(decode(&plain400, &Type::Number).unwrap(), num("1e400"));
}

#[test]
fn objects_need_exactly_their_attributes() {
    let ty = Type::object([("a", Type::String), ("b", Type::Number)]);
    let ok = Value::Object(BTreeMap::from([
        ("a".to_string(), Value::string("x")),
        ("b".to_string(), Value::Null),
    ]));
    assert_eq!(encode(&ok, &ty).unwrap(), hex("82 a1 61 a1 78 a1 62 c0"));
    round_trip(&ok, &ty);
    // Any key order decodes.
    assert_eq!(decode(&hex("82 a1 62 c0 a1 61 a1 78"), &ty).unwrap(), ok);

    let e = decode(&hex("81 a1 61 a1 78"), &ty).unwrap_err();
    assert_eq!(
        e.message.split(" (").next(),
        Some("object is missing attribute \"b\"")
    );
    let e = decode(&hex("83 a1 61 a1 78 a1 62 c0 a1 63 c0"), &ty).unwrap_err();
    assert_eq!(e.message, "unsupported attribute \"c\"");
    let e = decode(&hex("82 a1 61 c0 a1 61 c0"), &ty).unwrap_err();
    assert!(e.message.contains("duplicate attribute"), "{e}");

    let missing = Value::Object(BTreeMap::from([("a".to_string(), Value::Null)]));
    let e = encode(&missing, &ty).unwrap_err();
    assert!(e.message.contains("missing attribute \"b\""), "{e}");
    let nested = Type::object([("spec", ty.clone())]);
    let wrapped = Value::Object(BTreeMap::from([("spec".to_string(), missing)]));
    let e = encode(&wrapped, &nested).unwrap_err();
    assert_eq!(e.path, AttributePath::root().attr("spec"));
    assert!(
        e.to_string()
            .starts_with("spec: object is missing attribute \"b\""),
        "{e}"
    );
    assert_eq!(
        wrapped.conforms_to(&nested).unwrap_err().0,
        AttributePath::root().attr("spec")
    );
}

#[test]
fn errors_carry_the_path() {
    let ty = Type::object([("items", Type::list(Type::map(Type::Number)))]);
    // {"items": [{"k": "notnum"}]}
    let bytes = hex("81 a5 6974656d73 91 81 a1 6b a3 61 62 63");
    let e = decode(&bytes, &ty).unwrap_err();
    assert_eq!(
        e.path.steps,
        vec![
            PathStep::Attribute("items".into()),
            PathStep::ElementKeyInt(0),
            PathStep::ElementKeyString("k".into())
        ]
    );
    assert_eq!(e.to_string(), "items[0][\"k\"]: \"abc\" is not a valid number");
    let bad = Value::Object(BTreeMap::from([(
        "items".to_string(),
        Value::List(vec![Value::Map(BTreeMap::from([(
            "k".to_string(),
            Value::string("x"),
        )]))]),
    )]));
    let e = encode(&bad, &ty).unwrap_err();
    assert_eq!(
        e.to_string(),
        "items[0][\"k\"]: number is required, found a string"
    );
}

#[test]
fn collections_and_tuples() {
    let list = Value::List(vec![Value::string("a"), Value::Null, Value::unknown()]);
    assert_eq!(
        encode(&list, &Type::list(Type::String)).unwrap(),
        hex("93 a1 61 c0 d4 00 00")
    );
    round_trip(&list, &Type::list(Type::String));
    round_trip(&Value::Set(vec![num("1"), num("2")]), &Type::set(Type::Number));
    round_trip(&Value::List(vec![]), &Type::list(Type::Bool));
    let map = Value::Map(BTreeMap::from([("k".to_string(), Value::Bool(true))]));
    assert_eq!(encode(&map, &Type::map(Type::Bool)).unwrap(), hex("81 a1 6b c3"));
    let tuple_ty = Type::Tuple(vec![Type::String, Type::Bool]);
    let tuple = Value::Tuple(vec![Value::string("a"), Value::Bool(false)]);
    assert_eq!(encode(&tuple, &tuple_ty).unwrap(), hex("92 a1 61 c2"));
    assert!(decode(&hex("91 a1 61"), &tuple_ty).is_err());
    assert!(encode(&Value::Tuple(vec![]), &tuple_ty).is_err());
    // Kinds are not interchangeable.
    let e = encode(&Value::List(vec![]), &Type::set(Type::String)).unwrap_err();
    assert_eq!(e.message, "set(string) is required, found a list");
    assert!(decode(&hex("81 01 c0"), &Type::map(Type::Bool)).is_err());
}

#[test]
fn dynamic_values() {
    let v = Value::Dynamic(Box::new(Type::String), Box::new(Value::string("hi")));
    let mut expected = vec![0x92, 0xc4, 8];
    expected.extend(b"\"string\"");
    expected.extend([0xa2, b'h', b'i']);
    assert_eq!(encode(&v, &Type::Dynamic).unwrap(), expected);
    round_trip(&v, &Type::Dynamic);
    assert_eq!(v.as_str(), Some("hi"));

    let complex_ty = Type::object([("n", Type::Number), ("l", Type::list(Type::Dynamic))]);
    let complex = Value::Dynamic(
        Box::new(complex_ty.clone()),
        Box::new(Value::Object(BTreeMap::from([
            ("n".to_string(), num("1e400")),
            (
                "l".to_string(),
                Value::List(vec![
                    Value::Dynamic(Box::new(Type::Bool), Box::new(Value::Bool(true))),
                    Value::Null,
                    Value::unknown(),
                ]),
            ),
        ]))),
    );
    round_trip(&complex, &Type::Dynamic);
    round_trip(&Value::Null, &Type::Dynamic);
    assert_eq!(encode(&Value::unknown(), &Type::Dynamic).unwrap(), [0xd4, 0, 0]);
    assert_eq!(decode(&[0xc0], &Type::Dynamic).unwrap(), Value::Null);
    // Typed null and typed unknown keep their type.
    let typed_null = Value::Dynamic(Box::new(Type::String), Box::new(Value::Null));
    round_trip(&typed_null, &Type::Dynamic);
    assert!(typed_null.is_null());
    let typed_unknown = Value::Dynamic(Box::new(Type::Number), Box::new(Value::unknown()));
    round_trip(&typed_unknown, &Type::Dynamic);
    assert!(typed_unknown.is_unknown());
    // Type JSON may also come as a msgpack string.
    let mut as_str = vec![0x92, 0xa6];
    as_str.extend(b"\"bool\"");
    as_str.push(0xc2);
    assert_eq!(
        decode(&as_str, &Type::Dynamic).unwrap(),
        Value::Dynamic(Box::new(Type::Bool), Box::new(Value::Bool(false)))
    );
    // A bare known value cannot go into a dynamic slot.
    assert!(encode(&Value::string("x"), &Type::Dynamic).is_err());
    assert!(decode(&hex("93 c0 c0 c0"), &Type::Dynamic).is_err());
    // A dynamic wrapper of the right type is accepted in a typed slot.
    assert_eq!(encode(&v, &Type::String).unwrap(), hex("a2 68 69"));
    assert!(encode(&v, &Type::Number).is_err());
}

#[test]
fn hostile_input_is_refused_cleanly() {
    // Truncated everything.
    let good = encode(
        &Value::List(vec![Value::string("abc"), Value::string("d")]),
        &Type::list(Type::String),
    )
    .unwrap();
    for cut in 0..good.len() {
        assert!(decode(&good[..cut], &Type::list(Type::String)).is_err());
    }
    // Trailing bytes.
    assert!(decode(&[0xc0, 0xc0], &Type::String).is_err());
    // A huge declared length with nothing behind it.
    assert!(decode(&hex("dd ff ff ff ff"), &Type::list(Type::String)).is_err());
    assert!(decode(&hex("df ff ff ff ff"), &Type::map(Type::String)).is_err());
    assert!(decode(&hex("db ff ff ff ff"), &Type::String).is_err());
    // Deep nesting through types ...
    let mut deep_ty = Type::String;
    for _ in 0..1000 {
        deep_ty = Type::list(deep_ty);
    }
    let mut deep = vec![0x91; 1000];
    deep.push(0xc0);
    let e = decode(&deep, &deep_ty).unwrap_err();
    assert!(e.message.contains("deeper"), "{e}");
    // ... and through dynamic wrappers, which carry their own type.
    let mut chain = Vec::new();
    for _ in 0..100_000 {
        chain.extend([0x92, 0xc4, 9]);
        chain.extend(b"\"dynamic\"");
    }
    chain.push(0xc0);
    assert!(decode(&chain, &Type::Dynamic).is_err());
    // Invalid UTF-8 in a string.
    assert!(decode(&hex("a1 ff"), &Type::String).is_err());
    // The reserved marker.
    assert!(decode(&[0xc1], &Type::Bool).is_err());
}

mod depth_tests {
    use super::*;
    use crate::terraform::tfvalue::json;

    /// The deepest value the decoders accept goes through both codecs on a 2 MiB thread (the
    /// default for test threads and tokio workers), in either build profile, and one level
    /// more is refused, not overflowed.
    #[test]
    fn deepest_values_fit_a_worker_stack() {
        let worker = std::thread::Builder::new().stack_size(2 << 20);
        let handle = worker
            .spawn(|| {
                let mut ty = Type::String;
                let mut v = Value::string("x");
                for _ in 0..MAX_DEPTH {
                    ty = Type::list(ty);
                    v = Value::List(vec![v]);
                }
                let bytes = encode(&v, &ty).unwrap();
                assert_eq!(decode(&bytes, &ty).unwrap(), v);
                let text = json::encode(&v, &ty).unwrap();
                assert_eq!(json::decode(&text, &ty).unwrap(), v);
                assert_eq!(json::decode_lenient(&text, &ty).unwrap(), v);

                let deeper_ty = Type::list(ty.clone());
                let deeper = Value::List(vec![v.clone()]);
                assert!(
                    encode(&deeper, &deeper_ty)
                        .unwrap_err()
                        .message
                        .contains("deeper")
                );
                assert!(json::encode(&deeper, &deeper_ty).is_err());
                let mut deeper_bytes = vec![0x91];
                deeper_bytes.extend(&bytes);
                assert!(
                    decode(&deeper_bytes, &deeper_ty)
                        .unwrap_err()
                        .message
                        .contains("deeper")
                );
                let mut deeper_text = b"[".to_vec();
                deeper_text.extend(&text);
                deeper_text.push(b']');
                assert!(json::decode(&deeper_text, &deeper_ty).is_err());
            })
            .unwrap();
        assert!(handle.join().is_ok());
    }
}
