//! Conversions between [`ScalarValue`]s and Arrow arrays.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Date32Array, Decimal128Array, Float32Array,
    Float64Array, Int8Array, Int16Array, Int32Array, Int64Array, IntervalMonthDayNanoArray,
    StringArray, TimestampMicrosecondArray, UInt8Array, UInt16Array, UInt32Array, UInt64Array,
    new_null_array,
};
use arrow::compute::cast;
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, IntervalMonthDayNano, IntervalMonthDayNanoType, IntervalUnit, TimeUnit,
    TimestampMicrosecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use weir_planner::ScalarValue;

use super::EvalError;

/// An array of `len` copies of `value` (of the value's type; a typed NULL
/// gives an all-NULL array of that type).
pub fn scalar_to_array(value: &ScalarValue, len: usize) -> Result<ArrayRef, EvalError> {
    Ok(match value {
        ScalarValue::Null(t) => new_null_array(t, len),
        ScalarValue::Boolean(b) => Arc::new(BooleanArray::from(vec![*b; len])),
        ScalarValue::Int32(v) => Arc::new(Int32Array::from_value(*v, len)),
        ScalarValue::Int64(v) => Arc::new(Int64Array::from_value(*v, len)),
        ScalarValue::Int8(v) => Arc::new(Int8Array::from_value(*v, len)),
        ScalarValue::Int16(v) => Arc::new(Int16Array::from_value(*v, len)),
        ScalarValue::UInt8(v) => Arc::new(UInt8Array::from_value(*v, len)),
        ScalarValue::UInt16(v) => Arc::new(UInt16Array::from_value(*v, len)),
        ScalarValue::UInt32(v) => Arc::new(UInt32Array::from_value(*v, len)),
        ScalarValue::UInt64(v) => Arc::new(UInt64Array::from_value(*v, len)),
        ScalarValue::Float32(v) => Arc::new(Float32Array::from_value(*v, len)),
        ScalarValue::Float64(v) => Arc::new(Float64Array::from_value(*v, len)),
        ScalarValue::Decimal128(v, p, s) => {
            Arc::new(Decimal128Array::from_value(*v, len).with_precision_and_scale(*p, *s)?)
        }
        ScalarValue::Utf8(s) => Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            s.as_str(),
            len,
        ))),
        ScalarValue::Binary(b) => Arc::new(arrow::array::BinaryArray::from_iter_values(
            std::iter::repeat_n(b.as_slice(), len),
        )),
        ScalarValue::Date32(d) => Arc::new(Date32Array::from_value(*d, len)),
        ScalarValue::TimestampMicros(t) => Arc::new(TimestampMicrosecondArray::from_value(*t, len)),
        ScalarValue::Interval(m, d, us) => Arc::new(IntervalMonthDayNanoArray::from_value(
            IntervalMonthDayNano::new(*m, *d, us.saturating_mul(1000)),
            len,
        )),
    })
}

/// The value at `row` of `array`; a NULL gives `ScalarValue::Null` of the
/// array's type. Non-canonical types (HALF floats, LargeUtf8, other
/// timestamp units, ...) are converted to their canonical type first.
pub fn scalar_from_array(array: &dyn Array, row: usize) -> Result<ScalarValue, EvalError> {
    if row >= array.len() {
        return Err(EvalError::InvalidInput(format!(
            "row {row} out of range for an array of {} rows",
            array.len()
        )));
    }
    if array.data_type() == &DataType::Null || array.is_null(row) {
        return Ok(ScalarValue::Null(array.data_type().clone()));
    }
    Ok(match array.data_type() {
        DataType::Boolean => ScalarValue::Boolean(array.as_boolean().value(row)),
        DataType::Int32 => ScalarValue::Int32(array.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => ScalarValue::Int64(array.as_primitive::<Int64Type>().value(row)),
        DataType::Int8 => ScalarValue::Int8(array.as_primitive::<Int8Type>().value(row)),
        DataType::Int16 => ScalarValue::Int16(array.as_primitive::<Int16Type>().value(row)),
        DataType::UInt8 => ScalarValue::UInt8(array.as_primitive::<UInt8Type>().value(row)),
        DataType::UInt16 => ScalarValue::UInt16(array.as_primitive::<UInt16Type>().value(row)),
        DataType::UInt32 => ScalarValue::UInt32(array.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt64 => ScalarValue::UInt64(array.as_primitive::<UInt64Type>().value(row)),
        DataType::Float32 => ScalarValue::Float32(array.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => ScalarValue::Float64(array.as_primitive::<Float64Type>().value(row)),
        DataType::Decimal128(p, s) => {
            ScalarValue::Decimal128(array.as_primitive::<Decimal128Type>().value(row), *p, *s)
        }
        DataType::Utf8 => ScalarValue::Utf8(array.as_string::<i32>().value(row).to_string()),
        DataType::Binary => ScalarValue::Binary(array.as_binary::<i32>().value(row).to_vec()),
        DataType::Date32 => ScalarValue::Date32(array.as_primitive::<Date32Type>().value(row)),
        DataType::Timestamp(TimeUnit::Microsecond, None) => ScalarValue::TimestampMicros(
            array.as_primitive::<TimestampMicrosecondType>().value(row),
        ),
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let v = array.as_primitive::<IntervalMonthDayNanoType>().value(row);
            ScalarValue::Interval(v.months, v.days, v.nanoseconds / 1000)
        }
        other => {
            let canonical = weir_planner::types::canonical(other);
            if canonical == *other {
                return Err(EvalError::Unsupported(format!(
                    "values of type {other} are not supported"
                )));
            }
            let one = array.slice(row, 1);
            let converted = cast(one.as_ref(), &canonical)?;
            return scalar_from_array(converted.as_ref(), 0);
        }
    })
}
