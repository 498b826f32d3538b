#!/usr/bin/env ruby
# frozen_string_literal: true

# The independent reader behind memscape-graph's BGV count tests: reads each BGV file with
# Shopify/seafoam's parser (not part of memscape: SEAFOAM_DIR names a checkout of
# https://github.com/Shopify/seafoam) and prints one tab-separated line per graph:
#
#   path  index  dump_id  nodes  input_edges  successor_edges  blocks  name
#
# `edges` are seafoam's edges before any pass: one per non-null id in a node's input and
# successor slots. Usage: SEAFOAM_DIR=… ruby scripts/bgv-counts.rb FILE.bgv[.gz]…

$LOAD_PATH.unshift(File.join(ENV.fetch("SEAFOAM_DIR"), "lib"))
require "seafoam"

ARGV.each do |path|
  parser = Seafoam::BGV::BGVParser.new(path)
  parser.read_file_header
  parser.skip_document_props
  loop do
    index, id = parser.read_graph_preheader
    break unless index

    header = parser.read_graph_header
    name = parser.graph_name(header).join("/")
    graph = parser.read_graph
    # Successor slots carry no type (seafoam stores `type: nil` for them); input slots name
    # their InputType.
    inputs = graph.edges.count { |e| !e.props[:type].nil? }
    successors = graph.edges.size - inputs
    printf("%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", path, index, id, graph.nodes.size,
      inputs, successors, graph.blocks.size, name.gsub(/\s+/, " "))
  end
end
