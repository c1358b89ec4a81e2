//! Hardware counter blocks, numbered as aqlprofile numbers them
//! (`hsa_ven_amd_aqlprofile_block_name_t`), and how many counters of each fit one pass.

use std::fmt;

/// A counter block of gfx9-class GPUs (the gfx90a and gfx942 blocks the catalog uses, plus
/// the other gfx9 blocks with a known per-pass limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Block {
    /// Command processor, compute.
    Cpc,
    /// Command processor, fetcher.
    Cpf,
    /// Global data share.
    Gds,
    /// Graphics register bus manager.
    Grbm,
    /// Shader processor input (wave launch).
    Spi,
    /// Sequencer (instruction issue).
    Sq,
    /// Shader export.
    Sx,
    /// Texture addresser (vector memory address unit).
    Ta,
    /// L2 cache arbiter.
    Tca,
    /// L2 cache.
    Tcc,
    /// L1 vector cache.
    Tcp,
    /// Texture data.
    Td,
    /// Memory fabric interface.
    Gcea,
}

impl Block {
    /// Every block, in id order.
    pub const ALL: [Block; 13] = [
        Block::Cpc,
        Block::Cpf,
        Block::Gds,
        Block::Grbm,
        Block::Spi,
        Block::Sq,
        Block::Sx,
        Block::Ta,
        Block::Tca,
        Block::Tcc,
        Block::Tcp,
        Block::Td,
        Block::Gcea,
    ];

    /// The aqlprofile block id (`HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_*`).
    pub fn id(self) -> u32 {
        match self {
            Block::Cpc => 0,
            Block::Cpf => 1,
            Block::Gds => 2,
            Block::Grbm => 3,
            Block::Spi => 5,
            Block::Sq => 6,
            Block::Sx => 9,
            Block::Ta => 10,
            Block::Tca => 11,
            Block::Tcc => 12,
            Block::Tcp => 13,
            Block::Td => 14,
            Block::Gcea => 23,
        }
    }

    /// The block of an aqlprofile block id; `None` for ids this catalog does not know.
    pub fn from_id(id: u32) -> Option<Block> {
        Block::ALL.into_iter().find(|b| b.id() == id)
    }

    /// The block of a name as counter definitions write it (`SQ`, `tcc`).
    pub fn from_name(name: &str) -> Option<Block> {
        Block::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(name))
    }

    /// The block's name as counter definitions write it (`SQ`).
    pub fn name(self) -> &'static str {
        match self {
            Block::Cpc => "CPC",
            Block::Cpf => "CPF",
            Block::Gds => "GDS",
            Block::Grbm => "GRBM",
            Block::Spi => "SPI",
            Block::Sq => "SQ",
            Block::Sx => "SX",
            Block::Ta => "TA",
            Block::Tca => "TCA",
            Block::Tcc => "TCC",
            Block::Tcp => "TCP",
            Block::Td => "TD",
            Block::Gcea => "GCEA",
        }
    }

    /// How many counters of this block one pass can collect on gfx90a and gfx942 (the
    /// number of counter registers of each block instance).
    pub fn per_pass_limit(self) -> u32 {
        match self {
            Block::Sq => 8,
            Block::Spi => 6,
            Block::Tcc | Block::Tcp | Block::Tca | Block::Gds | Block::Sx => 4,
            Block::Ta | Block::Td | Block::Grbm | Block::Cpc | Block::Cpf | Block::Gcea => 2,
        }
    }
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names_round_trip() {
        for b in Block::ALL {
            assert_eq!(Block::from_id(b.id()), Some(b));
            assert_eq!(Block::from_name(&b.name().to_lowercase()), Some(b));
        }
        assert_eq!(Block::Sq.id(), 6);
        assert_eq!(Block::from_id(4), None, "GRBMSE is not in the catalog");
    }
}
