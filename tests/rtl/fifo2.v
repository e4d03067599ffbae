// A 2-entry FIFO with valid/ready handshakes on both sides.
//
// A word moves on a side iff valid && ready at a rising edge. in_ready means "not full" and
// out_valid means "not empty"; neither looks at the other side, so a full FIFO refuses a push
// even in the cycle it is popped, while a FIFO holding one word can push and pop together.
// The storage is reset too, so out_data is defined (a stale word) while the FIFO is empty.
module fifo2 (
    input  wire       clk,
    input  wire       rst,
    input  wire       in_valid,
    output wire       in_ready,
    input  wire [7:0] in_data,
    output wire       out_valid,
    input  wire       out_ready,
    output wire [7:0] out_data,
    output reg  [1:0] count
);
    reg [7:0] slot0;
    reg [7:0] slot1;
    reg       wr_ptr;
    reg       rd_ptr;

    wire push = in_valid && in_ready;
    wire pop  = out_valid && out_ready;

    assign in_ready  = count != 2'd2;
    assign out_valid = count != 2'd0;
    assign out_data  = rd_ptr ? slot1 : slot0;

    always @(posedge clk) begin
        if (rst) begin
            slot0  <= 8'd0;
            slot1  <= 8'd0;
            wr_ptr <= 1'b0;
            rd_ptr <= 1'b0;
            count  <= 2'd0;
        end else begin
            if (push) begin
                if (wr_ptr)
                    slot1 <= in_data;
                else
                    slot0 <= in_data;
                wr_ptr <= !wr_ptr;
            end
            if (pop)
                rd_ptr <= !rd_ptr;
            if (push && !pop)
                count <= count + 2'd1;
            else if (pop && !push)
                count <= count - 2'd1;
        end
    end
endmodule
