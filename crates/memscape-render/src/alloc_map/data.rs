//! A dataset's blocks on the GPU: storage buffers split into chunks below the binding limit,
//! the selection bits, the dense path's raster list.

use std::ops::Range;

use super::dense::RasterList;
use super::{AllocBlockGpu, AllocMapPipelines, BlockTimeGpu, ChunkInfoGpu, SelectionBits};

pub(crate) struct BlockChunk {
    pub(crate) bind_group: wgpu::BindGroup,
    blocks: wgpu::Buffer,
    times: wgpu::Buffer,
    /// Index of the chunk's first block in the whole dataset.
    base: u32,
    count: u32,
    /// The chunk's position in the upload.
    pub(crate) index: u32,
}

impl BlockChunk {
    /// The chunk-local instances of the global block range `range`, if any.
    pub(crate) fn local(&self, range: &Range<usize>) -> Option<Range<u32>> {
        let lo = range.start.max(self.base as usize);
        let hi = range.end.min(self.base as usize + self.count as usize);
        (lo < hi).then(|| (lo - self.base as usize) as u32..(hi - self.base as usize) as u32)
    }
}

/// A dataset's blocks on the GPU, uploaded once; split into chunks below the binding limit.
pub struct AllocMapData {
    pub(crate) chunks: Vec<BlockChunk>,
    /// One bit per block (bit `i % 32` of word `i / 32`), shared by every chunk's bind group.
    selection: wgpu::Buffer,
    /// The dense path's raster list (`None` where the path is unavailable).
    pub(crate) raster_list: Option<RasterList>,
    pub block_count: usize,
}

impl AllocMapData {
    /// Largest number of blocks in one chunk for the given binding limit.
    pub fn blocks_per_chunk(max_binding_bytes: u64) -> usize {
        let per_block = std::mem::size_of::<AllocBlockGpu>() as u64;
        ((max_binding_bytes / per_block).clamp(1, u64::from(u32::MAX))) as usize
    }

    pub fn upload(
        device: &wgpu::Device,
        pipelines: &AllocMapPipelines,
        blocks: &[AllocBlockGpu],
        times: &[BlockTimeGpu],
    ) -> Self {
        let per_chunk = Self::blocks_per_chunk(pipelines.features.max_storage_binding_bytes);
        Self::upload_chunked(device, pipelines, blocks, times, per_chunk)
    }

    /// [`Self::upload`] with an explicit chunk size (tests exercise the split with small ones).
    pub fn upload_chunked(
        device: &wgpu::Device,
        pipelines: &AllocMapPipelines,
        blocks: &[AllocBlockGpu],
        times: &[BlockTimeGpu],
        per_chunk: usize,
    ) -> Self {
        use wgpu::util::DeviceExt;
        // Block indices travel to the GPU as u32 (picking, selection bits).
        let n = blocks.len().min(times.len()).min(u32::MAX as usize);
        if n < blocks.len().max(times.len()) {
            tracing::warn!(
                "allocation map: {} blocks and {} lifetimes given, drawing {n}",
                blocks.len(),
                times.len()
            );
        }
        let per_chunk = per_chunk.max(1);
        let selection = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("AllocMapData::selection_bits"),
            size: 4 * SelectionBits::words_for(n).max(1) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let chunk_count = n.div_ceil(per_chunk);
        let list_offset = RasterList::header_words(chunk_count);
        let mut chunks = Vec::new();
        let mut start = 0;
        while start < n {
            let end = (start + per_chunk).min(n);
            let blocks_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("AllocMapData::blocks"),
                contents: bytemuck::cast_slice(&blocks[start..end]),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            });
            let times_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("AllocMapData::times"),
                contents: bytemuck::cast_slice(&times[start..end]),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            });
            let info = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("AllocMapData::chunk_info"),
                contents: bytemuck::bytes_of(&ChunkInfoGpu {
                    base: start as u32,
                    count: (end - start) as u32,
                    index: chunks.len() as u32,
                    list_offset,
                }),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let bind_group = Self::bind(
                device,
                pipelines,
                &blocks_buf,
                &times_buf,
                &info,
                &selection,
            );
            chunks.push(BlockChunk {
                bind_group,
                blocks: blocks_buf,
                times: times_buf,
                base: start as u32,
                count: (end - start) as u32,
                index: chunks.len() as u32,
            });
            start = end;
        }
        let raster_list = pipelines
            .dense
            .as_ref()
            .and_then(|dense| RasterList::new(device, dense, &pipelines.features, chunk_count, n));
        Self {
            chunks,
            selection,
            raster_list,
            block_count: n,
        }
    }

    fn bind(
        device: &wgpu::Device,
        pipelines: &AllocMapPipelines,
        blocks: &wgpu::Buffer,
        times: &wgpu::Buffer,
        info: &wgpu::Buffer,
        selection: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("AllocMapData::bind_group"),
            layout: &pipelines.blocks_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: blocks.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: times.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: info.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: selection.as_entire_binding(),
                },
            ],
        })
    }

    /// Draws the blocks `range` (indices into the whole upload, clipped to it) in index order,
    /// binding each chunk at bind group `group`. Instance `i` of a chunk reads its buffers at
    /// `i`: draws start at the chunk-local first instance.
    pub(crate) fn draw_range(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        group: u32,
        range: Range<usize>,
    ) {
        for chunk in &self.chunks {
            if let Some(local) = chunk.local(&range) {
                pass.set_bind_group(group, &chunk.bind_group, &[]);
                pass.draw(0..6, local);
            }
        }
    }

    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Replaces the selection bits (one bit per block, see [`SelectionBits`]): `n / 8` bytes
    /// through the queue, nothing else re-uploaded. Views show them with
    /// [`SelectionStyle::DimUnselected`]. Words beyond the upload are ignored; missing words
    /// keep their previous bits. Bits start all clear.
    pub fn set_selection(&self, queue: &wgpu::Queue, words: &[u32]) {
        let n = SelectionBits::words_for(self.block_count).min(words.len());
        if n > 0 {
            queue.write_buffer(&self.selection, 0, bytemuck::cast_slice(&words[..n]));
        }
    }

    /// Replaces the time axis (wall time ↔ event index) without touching the blocks.
    pub fn replace_times(&self, queue: &wgpu::Queue, times: &[BlockTimeGpu]) {
        let mut start = 0usize;
        for chunk in &self.chunks {
            let end = start + chunk.count as usize;
            if let Some(slice) = times.get(start..end) {
                queue.write_buffer(&chunk.times, 0, bytemuck::cast_slice(slice));
            }
            start = end;
        }
    }

    /// Replaces colours and attributes (a new colour mapping) without touching the times.
    pub fn replace_blocks(&self, queue: &wgpu::Queue, blocks: &[AllocBlockGpu]) {
        let mut start = 0usize;
        for chunk in &self.chunks {
            let end = start + chunk.count as usize;
            if let Some(slice) = blocks.get(start..end) {
                queue.write_buffer(&chunk.blocks, 0, bytemuck::cast_slice(slice));
            }
            start = end;
        }
    }
}
