//! Strings of one length (codes and flags such as `l_returnflag`, country
//! codes): recognised from their offsets and handled as fixed-width
//! values, without reading the offsets string by string.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, FixedSizeBinaryArray, StringArray, UInt8Array};
use arrow::buffer::{OffsetBuffer, ScalarBuffer};
use arrow::compute::FilterPredicate;
use arrow::datatypes::UInt8Type;

/// The length of every string of `offsets`, if they all have one.
#[inline]
pub(crate) fn one_length(offsets: &[i32]) -> Option<usize> {
    let (&first, &second) = (offsets.first()?, offsets.get(1)?);
    let len = second - first;
    // folds of 64 strings, which vectorise (a search would not), with an
    // exit between them: mixed lengths are told after the first few
    let mut start = 0;
    while start + 1 < offsets.len() {
        let end = (start + 64).min(offsets.len() - 1);
        let same = offsets[start..=end]
            .windows(2)
            .fold(true, |same, o| same & (o[1] - o[0] == len));
        if !same {
            return None;
        }
        start = end;
    }
    usize::try_from(len).ok()
}

/// `predicate` applied to `array` when it is a VARCHAR without NULLs whose
/// strings all have one length of at least a byte: the bytes are filtered
/// as fixed-width values and the offsets computed, where Arrow's kernel
/// copies string by string. `None` for any other array.
pub(crate) fn filter_one_length(
    array: &dyn Array,
    predicate: &FilterPredicate,
) -> Option<ArrayRef> {
    let strings = array.as_string_opt::<i32>()?;
    if strings.null_count() > 0 {
        return None;
    }
    let offsets = strings.value_offsets();
    let len = one_length(offsets).filter(|&len| len > 0)?;
    let (start, end) = (offsets[0] as usize, *offsets.last()? as usize);
    let bytes = strings.values().slice_with_length(start, end - start);
    let values = if len == 1 {
        let bytes = UInt8Array::new(ScalarBuffer::new(bytes, 0, end - start), None);
        let kept = predicate.filter(&bytes).ok()?;
        kept.as_primitive::<UInt8Type>().values().inner().clone()
    } else {
        let fixed = FixedSizeBinaryArray::try_new(i32::try_from(len).ok()?, bytes, None).ok()?;
        predicate
            .filter(&fixed)
            .ok()?
            .as_fixed_size_binary()
            .values()
            .clone()
    };
    let kept = predicate.count();
    debug_assert_eq!(values.len(), kept * len);
    let offsets: Vec<i32> = (0..=kept).map(|i| (i * len) as i32).collect();
    // SAFETY: the offsets start at 0 and grow by `len`; each fits i32,
    // since the last is at most the input's last offset
    let offsets = unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)) };
    // SAFETY: `values` is the kept strings of a valid StringArray, whole
    // and in order, and the offsets are their bounds: each string is the
    // UTF-8 it was. (Checking it again, with the offsets, took 5.5% of
    // TPC-H Q1 on one thread, twice this function's own time.)
    let out = unsafe { StringArray::new_unchecked(offsets, values, None) };
    Some(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use arrow::array::BooleanArray;
    use arrow::compute::{FilterBuilder, filter};

    use super::*;

    #[test]
    fn filtering_strings_of_one_length_keeps_what_the_kernel_keeps() {
        for len in 1..=5 {
            // a slice of a longer array: its first offset is not 0
            let values: Vec<String> = (0..300u32)
                .map(|i| {
                    (0..len)
                        .map(|j| char::from(b'a' + ((i + j) % 26) as u8))
                        .collect()
                })
                .collect();
            let all = StringArray::from(values);
            let array = all.slice(17, 250);
            let mask = BooleanArray::from((0..250).map(|i| i % 7 != 3).collect::<Vec<_>>());
            let predicate = FilterBuilder::new(&mask).optimize().build();
            let ours = filter_one_length(&array, &predicate).expect("one length");
            let theirs = filter(&array, &mask).unwrap();
            assert_eq!(
                ours.as_string::<i32>(),
                theirs.as_string::<i32>(),
                "length {len}"
            );
        }
        let mask = BooleanArray::from(vec![true, false, true]);
        let predicate = FilterBuilder::new(&mask).build();
        // mixed lengths, empty strings and NULLs go to Arrow's kernel
        for other in [
            StringArray::from(vec!["ab", "c", "de"]),
            StringArray::from(vec!["", "", ""]),
            StringArray::from(vec![Some("a"), None, Some("b")]),
        ] {
            assert!(filter_one_length(&other, &predicate).is_none());
        }
        assert_eq!(
            one_length(StringArray::from(Vec::<&str>::new()).value_offsets()),
            None
        );
        // one string of another length, at every place of a long array
        for odd in [0, 1, 63, 64, 65, 127, 128, 199] {
            let values: Vec<&str> = (0..200)
                .map(|i| if i == odd { "abc" } else { "ab" })
                .collect();
            let array = StringArray::from(values);
            assert_eq!(one_length(array.value_offsets()), None, "odd one at {odd}");
        }
        let long = StringArray::from(vec!["xyz"; 200]);
        assert_eq!(one_length(long.value_offsets()), Some(3));
    }
}
