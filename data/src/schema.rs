//! Column names, types and schema metadata keys.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema};
use ninjazero_rules::{Color, Role};

use crate::{FileMeta, SCHEMA_VERSION};

/// The rules version written to the file metadata.
pub const RULES_VERSION: &str = "1";
/// The model encoding version written to the file metadata.
pub const ENCODING_VERSION: &str = "1";

pub const META_SCHEMA_VERSION: &str = "ninjazero.schema_version";
pub const META_VARIANT: &str = "ninjazero.variant";
pub const META_RULES_VERSION: &str = "ninjazero.rules_version";
pub const META_ENCODING_VERSION: &str = "ninjazero.encoding_version";
pub const META_SEARCH_SETTINGS: &str = "ninjazero.search_settings";
pub const META_SEED: &str = "ninjazero.seed";
pub const META_MODEL_ID: &str = "ninjazero.model_id";
pub const META_GAMES: &str = "ninjazero.games";

/// `white_<role>` / `black_<role>`, the role name in snake case (`black_super_loony_rook`).
pub(crate) fn material_column(color: Color, role: Role) -> String {
    let side = match color {
        Color::White => "white",
        Color::Black => "black",
    };
    format!("{side}_{}", role.name().to_lowercase().replace(' ', "_"))
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new_list_field(item, true)))
}

/// Every column with its type and nullability, in file order.
pub(crate) fn fields() -> Vec<Field> {
    let mut fields = vec![
        Field::new("variant", DataType::Utf8, false),
        Field::new("game_id", DataType::UInt64, false),
        Field::new("ply", DataType::UInt16, false),
        Field::new("fen", DataType::Utf8, false),
        Field::new("side_to_move", DataType::Utf8, false),
        Field::new("policy_index", list_of(DataType::UInt32), false),
        Field::new("policy_move", list_of(DataType::Utf8), false),
        Field::new("policy_visits", list_of(DataType::UInt32), false),
        Field::new("policy_prob", list_of(DataType::Float32), false),
        Field::new("root_value", DataType::Float32, false),
        Field::new("full_search", DataType::Boolean, false),
        Field::new("result", DataType::Float32, false),
        Field::new("winner", DataType::Utf8, false),
        Field::new("termination", DataType::Utf8, false),
    ];
    for color in Color::ALL {
        for role in Role::ALL {
            fields.push(Field::new(
                material_column(color, role),
                DataType::UInt8,
                false,
            ));
        }
    }
    fields.extend([
        Field::new("white_hand", DataType::UInt8, false),
        Field::new("black_hand", DataType::UInt8, false),
        Field::new("move_played", DataType::Utf8, false),
        Field::new("model_id", DataType::Utf8, false),
        Field::new("start_fen", DataType::Utf8, false),
        Field::new("resignation_disabled", DataType::Boolean, false),
        Field::new("would_resign_side", DataType::Utf8, true),
        Field::new("would_resign_ply", DataType::UInt16, true),
    ]);
    fields
}

/// The column names of a dataset file, in order.
pub fn column_names() -> Vec<String> {
    fields().into_iter().map(|f| f.name().clone()).collect()
}

/// The schema of a file holding `games` games made under `meta`.
pub(crate) fn schema(meta: &FileMeta, games: usize) -> Schema {
    let metadata = HashMap::from([
        (META_SCHEMA_VERSION.to_string(), SCHEMA_VERSION.to_string()),
        (META_VARIANT.to_string(), meta.variant.id().to_string()),
        (META_RULES_VERSION.to_string(), RULES_VERSION.to_string()),
        (
            META_ENCODING_VERSION.to_string(),
            ENCODING_VERSION.to_string(),
        ),
        (
            META_SEARCH_SETTINGS.to_string(),
            meta.search_settings.to_json(),
        ),
        (META_SEED.to_string(), meta.seed.to_string()),
        (META_MODEL_ID.to_string(), meta.model_id.clone()),
        (META_GAMES.to_string(), games.to_string()),
    ]);
    Schema::new_with_metadata(fields(), metadata)
}

pub(crate) fn color_char(color: Color) -> &'static str {
    match color {
        Color::White => "w",
        Color::Black => "b",
    }
}

pub(crate) fn color_from_char(text: &str) -> Option<Color> {
    match text {
        "w" => Some(Color::White),
        "b" => Some(Color::Black),
        _ => None,
    }
}

pub(crate) fn color_name(color: Color) -> &'static str {
    match color {
        Color::White => "white",
        Color::Black => "black",
    }
}

pub(crate) fn color_from_name(text: &str) -> Option<Color> {
    match text {
        "white" => Some(Color::White),
        "black" => Some(Color::Black),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn material_columns_are_snake_case() {
        assert_eq!(material_column(Color::White, Role::Pawn), "white_pawn");
        assert_eq!(
            material_column(Color::Black, Role::InsaneNinjaKnight),
            "black_insane_ninja_knight"
        );
        assert_eq!(
            material_column(Color::White, Role::LoonyRook),
            "white_super_loony_rook"
        );
        let names = column_names();
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
        assert_eq!(names.len(), 14 + 30 + 8);
    }
}
