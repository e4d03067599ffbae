// Testbench for the cross-check of credit_channel.v against an archmodel channel
// (test_credit_channel.py).
//
// Stimulus: stimulus.mem in the working directory holds CYCLES + 1 lines of two bits,
// {offer, out_ready}, one line per cycle; registers hold line k during cycle k (reset loads
// line 0, rising edge k loads line k + 1). The source obeys the stream rules: it raises
// in_valid when offer says so and then holds in_valid and its payload until the word moves;
// the payload is a byte counter that advances on in_fire.
//
// Sampling: as in tb.v, cycle k ends at rising edge k after reset and every signal is
// printed one time unit before that edge, when the values are settled.
module tb_credit_channel;
    parameter CYCLES   = 200;
    parameter LATENCY  = 1;
    parameter CAPACITY = 2;

    reg clk = 1'b0;
    reg rst = 1'b1;
    reg [1:0] pattern [0:CYCLES];
    reg offer;
    reg out_ready;
    reg holding;
    reg [7:0] word;
    integer cycle = 0;

    wire       in_valid = offer || holding;
    wire       in_ready;
    wire       out_valid;
    wire [7:0] out_data;
    wire [7:0] credits;
    wire [7:0] waiting;
    wire       in_fire  = in_valid && in_ready;
    wire       out_fire = out_valid && out_ready;

    credit_channel #(.LATENCY(LATENCY), .CAPACITY(CAPACITY)) u_channel (
        .clk(clk), .rst(rst),
        .in_valid(in_valid), .in_ready(in_ready), .in_data(word),
        .out_valid(out_valid), .out_ready(out_ready), .out_data(out_data),
        .credits(credits), .waiting(waiting)
    );

    always @(posedge clk) begin
        if (rst) begin
            {offer, out_ready} <= pattern[0];
            holding <= 1'b0;
            word    <= 8'd0;
        end else begin
            {offer, out_ready} <= pattern[cycle + 1];
            holding <= in_valid && !in_ready;
            if (in_fire)
                word <= word + 8'd1;
        end
    end

    initial begin
        $readmemb("stimulus.mem", pattern);
        #5 clk = 1'b1;
        #5 clk = 1'b0;
        #5 clk = 1'b1;
        #5 clk = 1'b0;
        rst = 1'b0;
        for (cycle = 0; cycle < CYCLES; cycle = cycle + 1) begin
            #4 $display("cycle=%0d in_valid=%0d in_ready=%0d in_fire=%0d in_data=%0d credits=%0d out_valid=%0d out_ready=%0d out_fire=%0d out_data=%0d waiting=%0d",
                        cycle, in_valid, in_ready, in_fire, word, credits, out_valid, out_ready,
                        out_fire, out_data, waiting);
            #1 clk = 1'b1;
            #5 clk = 1'b0;
        end
        $finish;
    end
endmodule
