//! The figures, each drawn with plotters' SVG backend into a string.

pub mod bars;
pub mod owd;
pub mod rtt;
pub mod style;
pub mod svg;
pub mod sweep;
pub mod timeline;
pub mod tsn;

pub use svg::Figure;
