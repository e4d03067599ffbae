// An 8-bit up counter with enable and synchronous reset; it wraps from 255 to 0.
// In the cross-check it numbers the words pushed into the FIFO (tb.v drives en with in_fire).
module counter (
    input  wire       clk,
    input  wire       rst,
    input  wire       en,
    output reg  [7:0] value
);
    always @(posedge clk) begin
        if (rst)
            value <= 8'd0;
        else if (en)
            value <= value + 8'd1;
    end
endmodule
