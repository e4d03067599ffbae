// The RTL reading of archmodel's Channel (archmodel/kernel/channel.py, ports.py): a registered,
// credit-flow-controlled valid/ready link carrying bytes, without a width limit.
//
// Sender side: a counter of CAPACITY credits. in_ready = credits > 0; a word moves in iff
// in_valid && in_ready at a rising edge, and it spends a credit.
// Link: LATENCY pipeline registers; a word that moves in at edge t sits in the last stage
// during the cycle before edge t + LATENCY, so the receiver can take it at that edge.
// Receiver side: the word in the last stage, or the oldest in a buffer of CAPACITY entries,
// is presented on out_valid/out_data; a word not taken at the end of the pipeline moves into
// the buffer. The credits in use never exceed CAPACITY, so the buffer cannot overflow.
// Credit return: a word taken at edge t gives its credit back in the same edge's update of
// the credit register, so the sender can spend it from edge t + 1. The round trip is
// LATENCY + 1 edges, and LATENCY + 1 credits sustain one word per cycle.
//
// waiting counts the words that have arrived and not been taken (archmodel: len(in_port)).
module credit_channel #(
    parameter LATENCY  = 1,
    parameter CAPACITY = 2
) (
    input  wire       clk,
    input  wire       rst,
    input  wire       in_valid,
    output wire       in_ready,
    input  wire [7:0] in_data,
    output wire       out_valid,
    input  wire       out_ready,
    output wire [7:0] out_data,
    output reg  [7:0] credits,
    output wire [7:0] waiting
);
    reg [LATENCY-1:0] stage_valid;
    reg [7:0]         stage_data [0:LATENCY-1];
    reg [7:0]         buffer [0:CAPACITY-1];
    reg [7:0]         head;
    reg [7:0]         tail;
    reg [7:0]         buffered;

    wire       arrived      = stage_valid[LATENCY-1];
    wire [7:0] arrived_data = stage_data[LATENCY-1];
    wire       in_fire      = in_valid && in_ready;
    wire       out_fire     = out_valid && out_ready;
    // The buffered words are older than the one at the end of the pipeline.
    wire       take_arrived = out_fire && buffered == 8'd0;
    wire       store        = arrived && !take_arrived;
    wire       take_buffer  = out_fire && buffered != 8'd0;

    assign in_ready  = credits != 8'd0;
    assign out_valid = arrived || buffered != 8'd0;
    assign out_data  = buffered != 8'd0 ? buffer[head] : arrived_data;
    assign waiting   = buffered + arrived;

    integer i;
    always @(posedge clk) begin
        if (rst) begin
            credits     <= CAPACITY;
            stage_valid <= {LATENCY{1'b0}};
            for (i = 0; i < LATENCY; i = i + 1)
                stage_data[i] <= 8'd0;
            head     <= 8'd0;
            tail     <= 8'd0;
            buffered <= 8'd0;
        end else begin
            credits <= credits - in_fire + out_fire;
            stage_valid[0] <= in_fire;
            stage_data[0]  <= in_data;
            for (i = 1; i < LATENCY; i = i + 1) begin
                stage_valid[i] <= stage_valid[i-1];
                stage_data[i]  <= stage_data[i-1];
            end
            if (store) begin
                if (buffered == CAPACITY && !take_buffer) begin
                    $display("ERROR: credit_channel buffer overflow at %0t", $time);
                    $finish;
                end
                buffer[tail] <= arrived_data;
                tail <= tail == CAPACITY - 1 ? 8'd0 : tail + 8'd1;
            end
            if (take_buffer)
                head <= head == CAPACITY - 1 ? 8'd0 : head + 8'd1;
            buffered <= buffered + store - take_buffer;
        end
    end
endmodule
