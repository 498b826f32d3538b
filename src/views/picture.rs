//! A view's drawing as data: GPU shapes plus labels, in points from the picture's top left.
//! The GUI draws it through `shapes_paint` and egui; `memscape render` through
//! `crate::headless`.

use memscape_render::shapes::Shape;

use crate::views::labels::Label;

#[derive(Default)]
pub struct Picture {
    pub shapes: Vec<Shape>,
    pub labels: Vec<Label>,
}

impl Picture {
    pub fn extend(&mut self, other: Picture) {
        self.shapes.extend(other.shapes);
        self.labels.extend(other.labels);
    }
}
