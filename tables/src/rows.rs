//! Column-major row buffers that follow a [`Table`] definition. Row
//! builders push one value per column in definition order, straight into
//! polars column builders (Arrow buffers: 8 bytes a number and a validity
//! bit, a 16-byte view a string, its text inline up to 12 bytes), so that
//! [`Rows::take_columns`] hands them to the writer without a copy and a
//! batch costs the writer no second buffer of the same rows.

use crate::schema::{Col, Table, Ty};
use polars::prelude::{
    BooleanChunkedBuilder, ChunkedBuilder, Column, Float64Type, Int64Type, IntoColumn, PlSmallStr,
    PrimitiveChunkedBuilder, StringChunkedBuilder, TimeUnit, TimeZone, UInt64Type,
};
use std::io::Write;
use std::net::IpAddr;

/// A buffer for the text of one address: the longest `Display` writes,
/// eight groups of four hex digits, takes 39 bytes (45 with a margin).
pub struct AddressText {
    bytes: [u8; 45],
}

impl Default for AddressText {
    fn default() -> Self {
        AddressText { bytes: [0; 45] }
    }
}

impl AddressText {
    /// `address` as `Display` writes it. IPv4 digit by digit: the
    /// formatting machinery took longer than the rest of a row.
    pub fn of(&mut self, address: IpAddr) -> &str {
        let len = match address {
            IpAddr::V4(v4) => {
                let mut at = 0;
                for (i, octet) in v4.octets().into_iter().enumerate() {
                    if i > 0 {
                        self.bytes[at] = b'.';
                        at += 1;
                    }
                    if octet >= 100 {
                        self.bytes[at] = b'0' + octet / 100;
                        at += 1;
                    }
                    if octet >= 10 {
                        self.bytes[at] = b'0' + octet / 10 % 10;
                        at += 1;
                    }
                    self.bytes[at] = b'0' + octet % 10;
                    at += 1;
                }
                at
            }
            IpAddr::V6(_) => {
                let mut cursor = std::io::Cursor::new(&mut self.bytes[..]);
                write!(cursor, "{address}").expect("an IPv6 address's text fits in 45 bytes");
                cursor.position() as usize
            }
        };
        std::str::from_utf8(&self.bytes[..len]).expect("digits, dots, colons and hex letters")
    }
}

/// One column's builder. Times are epoch nanoseconds.
enum ColumnBuilder {
    U64(PrimitiveChunkedBuilder<UInt64Type>),
    I64(PrimitiveChunkedBuilder<Int64Type>),
    F64(PrimitiveChunkedBuilder<Float64Type>),
    Str(StringChunkedBuilder),
    Bool(BooleanChunkedBuilder),
    Time(PrimitiveChunkedBuilder<Int64Type>),
}

impl ColumnBuilder {
    fn new(col: &Col) -> Self {
        let name = PlSmallStr::from_static(col.name);
        match col.ty {
            Ty::U64 => ColumnBuilder::U64(PrimitiveChunkedBuilder::new(name, 0)),
            Ty::I64 => ColumnBuilder::I64(PrimitiveChunkedBuilder::new(name, 0)),
            Ty::F64 => ColumnBuilder::F64(PrimitiveChunkedBuilder::new(name, 0)),
            Ty::Str => ColumnBuilder::Str(StringChunkedBuilder::new(name, 0)),
            Ty::Bool => ColumnBuilder::Bool(BooleanChunkedBuilder::new(name, 0)),
            Ty::Time => ColumnBuilder::Time(PrimitiveChunkedBuilder::new(name, 0)),
        }
    }

    fn finish(self) -> Column {
        match self {
            ColumnBuilder::U64(b) => b.finish().into_column(),
            ColumnBuilder::I64(b) => b.finish().into_column(),
            ColumnBuilder::F64(b) => b.finish().into_column(),
            ColumnBuilder::Str(b) => b.finish().into_column(),
            ColumnBuilder::Bool(b) => b.finish().into_column(),
            ColumnBuilder::Time(b) => b
                .finish()
                .into_datetime(TimeUnit::Nanoseconds, Some(TimeZone::UTC))
                .into_column(),
        }
    }
}

/// Bytes one value of the type takes in its column builder, about (its
/// text aside; a bool is two bits, counted as a byte).
fn value_bytes(ty: Ty) -> usize {
    match ty {
        Ty::U64 | Ty::I64 | Ty::F64 | Ty::Time => 8,
        Ty::Str => 16,
        Ty::Bool => 1,
    }
}

/// Rows of one table, built a row at a time.
pub struct Rows {
    /// The table's columns, in the order values are pushed.
    pub columns: &'static [Col],
    builders: Vec<ColumnBuilder>,
    /// Rows ended with [`Rows::end`].
    complete_rows: usize,
    cursor: usize,
    /// Bytes of one row's values, and of the text of every row's strings.
    row_bytes: usize,
    text_bytes: usize,
}

impl Rows {
    /// No rows of `table` yet.
    pub fn new(table: &Table) -> Self {
        Rows {
            columns: table.columns,
            builders: table.columns.iter().map(ColumnBuilder::new).collect(),
            complete_rows: 0,
            cursor: 0,
            row_bytes: table.columns.iter().map(|c| value_bytes(c.ty)).sum(),
            text_bytes: 0,
        }
    }

    /// Bytes the buffered rows hold, about (what decides when a batch is
    /// written): short strings counted as if not inline, the builders'
    /// spare capacity not counted.
    pub fn bytes(&self) -> usize {
        self.complete_rows * self.row_bytes + self.text_bytes
    }

    /// Rows ended and not yet taken.
    pub fn len(&self) -> usize {
        self.complete_rows
    }

    /// Whether no row is buffered.
    pub fn is_empty(&self) -> bool {
        self.complete_rows == 0
    }

    /// The buffered rows as polars columns, in definition order; the rows
    /// start again empty.
    pub fn take_columns(&mut self) -> Vec<Column> {
        debug_assert_eq!(self.cursor, 0, "rows taken in the middle of a row");
        let columns = self.columns;
        let taken = std::mem::replace(
            &mut self.builders,
            columns.iter().map(ColumnBuilder::new).collect(),
        );
        self.complete_rows = 0;
        self.cursor = 0;
        self.text_bytes = 0;
        taken.into_iter().map(ColumnBuilder::finish).collect()
    }

    fn slot(&mut self) -> &mut ColumnBuilder {
        let i = self.cursor;
        self.cursor += 1;
        // A builder pushing more values than the table has columns is a
        // bug in this crate, never a property of the input.
        &mut self.builders[i]
    }

    fn mismatch(&self, wanted: &str) -> ! {
        let c = &self.columns[self.cursor - 1];
        panic!(
            "row builder pushed {wanted} into column {} of type {}",
            c.name,
            c.ty.name()
        )
    }

    /// The next column's value, a UInt64 (None: null).
    pub fn u64(&mut self, v: impl Into<Option<u64>>) -> &mut Self {
        match self.slot() {
            ColumnBuilder::U64(c) => c.append_option(v.into()),
            _ => self.mismatch("u64"),
        }
        self
    }

    /// The next column's value, a Float64 (None: null).
    pub fn f64(&mut self, v: impl Into<Option<f64>>) -> &mut Self {
        match self.slot() {
            ColumnBuilder::F64(c) => c.append_option(v.into()),
            _ => self.mismatch("f64"),
        }
        self
    }

    /// The next column's value, a String (None: null).
    pub fn str(&mut self, v: Option<impl AsRef<str>>) -> &mut Self {
        let len = v.as_ref().map_or(0, |s| s.as_ref().len());
        match self.slot() {
            ColumnBuilder::Str(c) => c.append_option(v.as_ref().map(AsRef::as_ref)),
            _ => self.mismatch("str"),
        }
        self.text_bytes += len;
        self
    }

    /// An address in its usual text form, written without allocating
    /// (addresses are in most rows of most tables).
    pub fn address(&mut self, v: Option<IpAddr>) -> &mut Self {
        let mut text = AddressText::default();
        self.str(v.map(|a| text.of(a)))
    }

    /// The next column's value, a String that is never null.
    pub fn text(&mut self, v: impl AsRef<str>) -> &mut Self {
        self.str(Some(v))
    }

    /// The next column's value, a Boolean (None: null).
    pub fn bool(&mut self, v: impl Into<Option<bool>>) -> &mut Self {
        match self.slot() {
            ColumnBuilder::Bool(c) => c.append_option(v.into()),
            _ => self.mismatch("bool"),
        }
        self
    }

    /// Epoch nanoseconds.
    pub fn time(&mut self, v: Option<i64>) -> &mut Self {
        match self.slot() {
            ColumnBuilder::Time(c) => c.append_option(v),
            _ => self.mismatch("time"),
        }
        self
    }

    /// Ends a row; every column must have had its value.
    pub fn end(&mut self) {
        assert_eq!(
            self.cursor,
            self.columns.len(),
            "row builder pushed {} values for {} columns",
            self.cursor,
            self.columns.len()
        );
        self.cursor = 0;
        self.complete_rows += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::AddressText;
    use std::net::IpAddr;

    #[test]
    fn address_text_is_what_display_writes() {
        let mut text = AddressText::default();
        for a in [
            "0.0.0.0",
            "255.255.255.255",
            "10.0.0.1",
            "192.168.100.9",
            "172.16.20.99",
            "::",
            "::1",
            "fe80::1",
            "2001:db8:0:1:1:1:1:1",
            "::ffff:1.2.3.4",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            "::ffff:255.255.255.255",
        ] {
            let address: IpAddr = a.parse().expect("an address");
            assert_eq!(text.of(address), address.to_string(), "{a}");
        }
    }
}
