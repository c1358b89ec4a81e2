//! The code object's metadata note (AMDGPUUsage, "Code Object V3 to V6 Metadata"): a
//! MessagePack map in the `NT_AMDGPU_METADATA` note of owner `AMDGPU`, describing each kernel
//! (its symbols, kernarg segment, register counts, arguments).

use std::collections::BTreeMap;

use crate::elf::{AmdgpuElf, ElfNote};
use crate::error::CodeObjectError;

/// Note type of the MessagePack metadata.
const NT_AMDGPU_METADATA: u32 = 32;
/// Note owner of AMDGPU notes (the name with its terminating NUL).
const NOTE_OWNER: &[u8] = b"AMDGPU\0";
/// Nesting beyond this is refused (metadata nests four levels deep).
const MAX_DEPTH: usize = 16;

/// A MessagePack value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `nil`.
    Nil,
    /// `true`/`false`.
    Bool(bool),
    /// Any integer that fits.
    Int(i128),
    /// `float 32`/`float 64`.
    Float(f64),
    /// A string (invalid UTF-8 replaced).
    Str(String),
    /// Binary data.
    Bin(Vec<u8>),
    /// An array.
    Array(Vec<Value>),
    /// A map whose keys are strings (other keys are dropped).
    Map(BTreeMap<String, Value>),
}

impl Value {
    /// The entry `key` of a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(m) => m.get(key),
            _ => None,
        }
    }

    /// An integer as `u64`, when it is one and fits.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }

    /// A string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// One kernel argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelArgument {
    /// Source name, when recorded.
    pub name: Option<String>,
    /// Byte offset in the kernarg segment.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// What the argument is (`global_buffer`, `by_value`, `hidden_block_count_x`, ...).
    pub value_kind: String,
}

/// One kernel of the metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelMetadata {
    /// Source name (`.name`).
    pub name: String,
    /// Descriptor symbol (`.symbol`, `<name>.kd`).
    pub symbol: String,
    /// Kernarg segment size in bytes.
    pub kernarg_segment_size: u64,
    /// Static LDS bytes.
    pub group_segment_fixed_size: u64,
    /// Static scratch bytes per work-item.
    pub private_segment_fixed_size: u64,
    /// Scalar registers used.
    pub sgpr_count: u64,
    /// Vector registers used (architected VGPRs).
    pub vgpr_count: u64,
    /// Accumulation registers used, when recorded (gfx90a and later).
    pub agpr_count: Option<u64>,
    /// Lanes per wave.
    pub wavefront_size: u64,
    /// Largest work-group the kernel supports.
    pub max_flat_workgroup_size: u64,
    /// Arguments in order.
    pub args: Vec<KernelArgument>,
}

/// The `.value_kind` of the hidden argument that carries the hostcall buffer.
pub const HOSTCALL_BUFFER: &str = "hidden_hostcall_buffer";
/// The `.value_kind` of the hidden argument that carries a cooperative launch's grid-sync
/// information.
pub const MULTIGRID_SYNC_ARG: &str = "hidden_multigrid_sync_arg";

impl KernelMetadata {
    /// Whether the kernel may call the host through the hostcall buffer (device `printf`,
    /// device `malloc` and other host services): the compiler lists the buffer among its
    /// arguments unless it proved the kernel never uses it, and the runtime serves the calls.
    pub fn calls_host(&self) -> bool {
        self.args.iter().any(|a| a.value_kind == HOSTCALL_BUFFER)
    }

    /// The kernarg offset of the cooperative-launch argument (a grid or multi-grid barrier's
    /// information), when the kernel may use one.
    pub fn multigrid_sync_offset(&self) -> Option<u64> {
        let arg = self
            .args
            .iter()
            .find(|a| a.value_kind == MULTIGRID_SYNC_ARG);
        arg.map(|a| a.offset)
    }
}

/// The metadata of a code object.
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    /// `amdhsa.version` (major, minor).
    pub version: (u64, u64),
    /// `amdhsa.target`, when recorded.
    pub target: Option<String>,
    /// The kernels.
    pub kernels: Vec<KernelMetadata>,
    /// The whole map, for fields not lifted above.
    pub raw: Value,
}

impl Metadata {
    /// The metadata note of `elf`, if it has one.
    pub fn of(elf: &AmdgpuElf<'_>) -> Result<Option<Metadata>, CodeObjectError> {
        Metadata::among(&elf.notes()?)
    }

    /// The metadata note among `notes`, if there is one.
    pub fn among(notes: &[ElfNote<'_>]) -> Result<Option<Metadata>, CodeObjectError> {
        let note = notes
            .iter()
            .find(|n| n.kind == NT_AMDGPU_METADATA && owner_is_amdgpu(n.owner));
        note.map(|n| Metadata::decode(n.desc)).transpose()
    }

    /// Decodes the MessagePack bytes of the note.
    pub fn decode(bytes: &[u8]) -> Result<Metadata, CodeObjectError> {
        let raw = decode(bytes)?;
        let bad = |what: &str| CodeObjectError::Malformed(format!("metadata note: {what}"));
        let version = match raw.get("amdhsa.version") {
            Some(Value::Array(v)) if v.len() == 2 => (
                v[0].as_u64().ok_or_else(|| bad("amdhsa.version"))?,
                v[1].as_u64().ok_or_else(|| bad("amdhsa.version"))?,
            ),
            _ => return Err(bad("no amdhsa.version")),
        };
        let kernels = match raw.get("amdhsa.kernels") {
            Some(Value::Array(ks)) => ks.iter().map(kernel).collect::<Result<_, _>>()?,
            None => Vec::new(),
            Some(_) => return Err(bad("amdhsa.kernels is not an array")),
        };
        Ok(Metadata {
            version,
            target: raw
                .get("amdhsa.target")
                .and_then(Value::as_str)
                .map(str::to_owned),
            kernels,
            raw,
        })
    }
}

/// `AMDGPU`, with or without the terminating NUL the note records.
fn owner_is_amdgpu(name: &[u8]) -> bool {
    name == NOTE_OWNER || name == &NOTE_OWNER[..NOTE_OWNER.len() - 1]
}

fn kernel(k: &Value) -> Result<KernelMetadata, CodeObjectError> {
    let text = |key: &str| {
        k.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| CodeObjectError::Malformed(format!("metadata kernel without {key}")))
    };
    let num = |key: &str| k.get(key).and_then(Value::as_u64).unwrap_or(0);
    let args = match k.get(".args") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|a| KernelArgument {
                name: a.get(".name").and_then(Value::as_str).map(str::to_owned),
                offset: a.get(".offset").and_then(Value::as_u64).unwrap_or(0),
                size: a.get(".size").and_then(Value::as_u64).unwrap_or(0),
                value_kind: a
                    .get(".value_kind")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(KernelMetadata {
        name: text(".name")?,
        symbol: text(".symbol")?,
        kernarg_segment_size: num(".kernarg_segment_size"),
        group_segment_fixed_size: num(".group_segment_fixed_size"),
        private_segment_fixed_size: num(".private_segment_fixed_size"),
        sgpr_count: num(".sgpr_count"),
        vgpr_count: num(".vgpr_count"),
        agpr_count: k.get(".agpr_count").and_then(Value::as_u64),
        wavefront_size: num(".wavefront_size"),
        max_flat_workgroup_size: num(".max_flat_workgroup_size"),
        args,
    })
}

/// Decodes one MessagePack value that fills `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Value, CodeObjectError> {
    let mut reader = Reader { bytes, at: 0 };
    let v = reader.value(0)?;
    Ok(v)
}

struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Result<&'b [u8], CodeObjectError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                CodeObjectError::Malformed(format!(
                    "metadata note cut short at byte {} (needs {n} more)",
                    self.at
                ))
            })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn uint(&mut self, n: usize) -> Result<u64, CodeObjectError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b)))
    }

    fn value(&mut self, depth: usize) -> Result<Value, CodeObjectError> {
        if depth > MAX_DEPTH {
            return Err(CodeObjectError::Malformed(
                "metadata note nested too deep".into(),
            ));
        }
        let tag = self.take(1)?[0];
        Ok(match tag {
            0x00..=0x7f => Value::Int(i128::from(tag)),
            0x80..=0x8f => self.map(usize::from(tag & 0x0f), depth)?,
            0x90..=0x9f => self.array(usize::from(tag & 0x0f), depth)?,
            0xa0..=0xbf => self.string(usize::from(tag & 0x1f))?,
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.uint(1 << (tag - 0xc4))? as usize;
                Value::Bin(self.take(n)?.to_vec())
            }
            0xca => Value::Float(f64::from(f32::from_bits(self.uint(4)? as u32))),
            0xcb => Value::Float(f64::from_bits(self.uint(8)?)),
            0xcc..=0xcf => Value::Int(i128::from(self.uint(1 << (tag - 0xcc))?)),
            0xd0..=0xd3 => {
                let n = 1usize << (tag - 0xd0);
                let v = self.uint(n)?;
                let shift = 64 - 8 * n as u32;
                Value::Int(i128::from(((v << shift) as i64) >> shift))
            }
            0xd9..=0xdb => {
                let n = self.uint(1 << (tag - 0xd9))? as usize;
                self.string(n)?
            }
            0xdc | 0xdd => {
                let n = self.uint(2 << (tag - 0xdc))? as usize;
                self.array(n, depth)?
            }
            0xde | 0xdf => {
                let n = self.uint(2 << (tag - 0xde))? as usize;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::Int(i128::from(tag as i8)),
            other => {
                return Err(CodeObjectError::Malformed(format!(
                    "metadata note: MessagePack type {other:#x} at byte {} is not used by metadata",
                    self.at - 1
                )));
            }
        })
    }

    fn string(&mut self, n: usize) -> Result<Value, CodeObjectError> {
        Ok(Value::Str(
            String::from_utf8_lossy(self.take(n)?).into_owned(),
        ))
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Value, CodeObjectError> {
        // Each element takes at least one byte: a count beyond the input is corrupt.
        let mut out = Vec::with_capacity(n.min(self.bytes.len() - self.at));
        for _ in 0..n {
            out.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(out))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value, CodeObjectError> {
        let mut out = BTreeMap::new();
        for _ in 0..n {
            let key = self.value(depth + 1)?;
            let value = self.value(depth + 1)?;
            if let Value::Str(k) = key {
                out.insert(k, value);
            }
        }
        Ok(Value::Map(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Vec<u8> {
        let mut b = vec![0xa0 | text.len() as u8];
        b.extend(text.as_bytes());
        b
    }

    #[test]
    fn message_pack_values() {
        let mut b = vec![0x83];
        b.extend(s("a"));
        b.extend([0xcd, 0x01, 0x00]);
        b.extend(s("b"));
        b.extend([0x92, 0xff, 0xd0, 0x80]);
        b.extend(s("c"));
        b.extend([0xc3]);
        let v = decode(&b).unwrap();
        assert_eq!(v.get("a").and_then(Value::as_u64), Some(256));
        assert_eq!(
            v.get("b"),
            Some(&Value::Array(vec![Value::Int(-1), Value::Int(-128)]))
        );
        assert_eq!(v.get("c"), Some(&Value::Bool(true)));
        let err = decode(&[0x92, 0x01]).unwrap_err().to_string();
        assert!(err.contains("cut short"), "{err}");
        let deep = vec![0x91; 64];
        assert!(decode(&deep).unwrap_err().to_string().contains("too deep"));
    }

    /// A metadata map with one kernel `k` whose one argument has `value_kind`.
    fn one_kernel(value_kind: &str) -> Vec<u8> {
        let mut b = vec![0x82];
        b.extend(s("amdhsa.version"));
        b.extend([0x92, 0x01, 0x02]);
        b.extend(s("amdhsa.kernels"));
        b.extend([0x91, 0x84]);
        b.extend(s(".name"));
        b.extend(s("k"));
        b.extend(s(".symbol"));
        b.extend(s("k.kd"));
        b.extend(s(".vgpr_count"));
        b.push(12);
        b.extend(s(".args"));
        b.extend([0x91, 0x83]);
        b.extend(s(".offset"));
        b.push(8);
        b.extend(s(".size"));
        b.push(4);
        b.extend(s(".value_kind"));
        b.extend(s(value_kind));
        b
    }

    #[test]
    fn metadata_of_a_hand_written_map() {
        let m = Metadata::decode(&one_kernel("by_value")).unwrap();
        assert_eq!(m.version, (1, 2));
        assert_eq!(m.kernels.len(), 1);
        let k = &m.kernels[0];
        assert_eq!((k.name.as_str(), k.symbol.as_str()), ("k", "k.kd"));
        assert_eq!(k.vgpr_count, 12);
        assert_eq!(k.agpr_count, None);
        assert_eq!(
            k.args,
            vec![KernelArgument {
                name: None,
                offset: 8,
                size: 4,
                value_kind: "by_value".into()
            }]
        );
        assert!(!k.calls_host());
        assert_eq!(k.multigrid_sync_offset(), None);
        let cooperative = Metadata::decode(&one_kernel(MULTIGRID_SYNC_ARG)).unwrap();
        assert_eq!(cooperative.kernels[0].multigrid_sync_offset(), Some(8));
    }

    #[test]
    fn a_kernel_with_the_hostcall_buffer_calls_the_host_as_its_note_says() {
        let desc = one_kernel(HOSTCALL_BUFFER);
        // One note: owner "AMDGPU" (7 bytes with its NUL, padded to 8), the descriptor padded
        // to 4 bytes, then a note of another owner.
        let mut seg = Vec::new();
        seg.extend(7u32.to_le_bytes());
        seg.extend((desc.len() as u32).to_le_bytes());
        seg.extend(NT_AMDGPU_METADATA.to_le_bytes());
        seg.extend(b"AMDGPU\0\0");
        seg.extend(&desc);
        seg.resize(seg.len().next_multiple_of(4), 0);
        seg.extend(4u32.to_le_bytes());
        seg.extend(0u32.to_le_bytes());
        seg.extend(1u32.to_le_bytes());
        seg.extend(b"GNU\0");
        let notes = crate::elf::notes_in(&seg, 4).unwrap();
        assert_eq!(notes.len(), 2);
        let m = Metadata::among(&notes).unwrap().expect("the metadata note");
        assert!(m.kernels[0].calls_host());
        let others = crate::elf::notes_in(&seg[seg.len() - 16..], 4).unwrap();
        assert_eq!(Metadata::among(&others).unwrap(), None);
        assert!(
            crate::elf::notes_in(&seg[..20], 4).is_err(),
            "a note cut short"
        );
    }
}
