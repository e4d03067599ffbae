// Testbench for the cross-check of counter.v + fifo2.v against archmodel (test_counter_fifo.py).
//
// Stimulus: stimulus.mem in the working directory holds CYCLES + 1 lines of two bits,
// {in_valid, out_ready}, one line per cycle. Like a registered stimulus source, the registers
// in_valid/out_ready hold line k during cycle k: reset loads line 0 and rising edge k loads
// line k + 1. The counter's value is the FIFO's in_data and it counts on in_fire.
//
// Sampling: after two reset edges the testbench drives the clock itself. Cycle k is the time
// between rising edge k - 1 and rising edge k (cycle 0 ends at the first edge after reset);
// every signal is printed one time unit before rising edge k, when the values are settled.
// Those are the values a registered design acts on at edge k, and what archmodel components
// read from registers when they tick at edge k.
module tb;
    parameter CYCLES = 300;

    reg clk = 1'b0;
    reg rst = 1'b1;
    reg [1:0] pattern [0:CYCLES];
    reg in_valid;
    reg out_ready;
    integer cycle = 0;

    wire [7:0] value;
    wire       in_ready;
    wire       out_valid;
    wire [7:0] out_data;
    wire [1:0] count;
    wire       in_fire  = in_valid && in_ready;
    wire       out_fire = out_valid && out_ready;

    counter u_counter (
        .clk(clk), .rst(rst), .en(in_fire), .value(value)
    );
    fifo2 u_fifo (
        .clk(clk), .rst(rst),
        .in_valid(in_valid), .in_ready(in_ready), .in_data(value),
        .out_valid(out_valid), .out_ready(out_ready), .out_data(out_data),
        .count(count)
    );

    always @(posedge clk) begin
        if (rst)
            {in_valid, out_ready} <= pattern[0];
        else
            {in_valid, out_ready} <= pattern[cycle + 1];
    end

    initial begin
        $readmemb("stimulus.mem", pattern);
        #5 clk = 1'b1;
        #5 clk = 1'b0;
        #5 clk = 1'b1;
        #5 clk = 1'b0;
        rst = 1'b0;
        for (cycle = 0; cycle < CYCLES; cycle = cycle + 1) begin
            #4 $display("cycle=%0d in_valid=%0d in_ready=%0d in_fire=%0d in_data=%0d out_valid=%0d out_ready=%0d out_fire=%0d out_data=%0d count=%0d wr_ptr=%0d rd_ptr=%0d",
                        cycle, in_valid, in_ready, in_fire, value, out_valid, out_ready, out_fire,
                        out_data, count, u_fifo.wr_ptr, u_fifo.rd_ptr);
            #1 clk = 1'b1;
            #5 clk = 1'b0;
        end
        $finish;
    end
endmodule
