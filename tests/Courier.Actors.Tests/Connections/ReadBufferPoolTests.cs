using System.IO.Pipelines;
using System.Runtime.InteropServices;
using Courier.Actors.Connections;
using Xunit;

namespace Courier.Actors.Tests.Connections;

/// <summary>A connection's read buffer: small while reads are small, 64 KB once a read fills it, small again after a run of short reads.</summary>
public sealed class ReadBufferPoolTests
{
    [Fact]
    public void Buffers_start_small_grow_when_a_read_fills_one_and_shrink_after_a_run_of_short_reads()
    {
        var pool = new ReadBufferPool();
        Assert.Equal(ReadBufferPool.SmallSize, RentedLength(pool));

        pool.Observe(100); // CONNECT, SUB, PING
        Assert.Equal(ReadBufferPool.SmallSize, RentedLength(pool));

        pool.Observe(ReadBufferPool.SmallSize); // a publisher filled it
        Assert.Equal(ReadBufferPool.LargeSize, RentedLength(pool));

        for (var i = 0; i < 15; i++)
        {
            pool.Observe(200);
        }

        Assert.Equal(ReadBufferPool.LargeSize, RentedLength(pool)); // a lull is not yet a quiet client

        pool.Observe(200);
        Assert.Equal(ReadBufferPool.SmallSize, RentedLength(pool));

        // A larger request than the current size is honoured.
        using var big = pool.Rent(100_000);
        Assert.True(big.Memory.Length >= 100_000);
    }

    [Fact]
    public async Task A_pipe_reading_through_the_pool_reads_every_byte_in_order_as_the_buffer_grows()
    {
        var data = new byte[300_000];
        new Random(3).NextBytes(data);
        var pool = new ReadBufferPool();
        var reader = PipeReader.Create(new MemoryStream(data), pool.ReaderOptions());
        var received = new MemoryStream();
        while (true)
        {
            var result = await reader.ReadAsync();
            pool.Observe(result.Buffer.Length);

            // Consume all but a ragged tail, as a parser leaves a partial command.
            var keep = result.IsCompleted ? 0 : Math.Min(result.Buffer.Length, 37);
            var consumed = result.Buffer.Slice(0, result.Buffer.Length - keep);
            foreach (var segment in consumed)
            {
                received.Write(segment.Span);
            }

            reader.AdvanceTo(consumed.End, result.Buffer.End);
            if (result.IsCompleted)
            {
                break;
            }
        }

        await reader.CompleteAsync();
        Assert.Equal(data, received.ToArray());
        Assert.Equal(ReadBufferPool.LargeSize, pool.SegmentSize);
    }

    private static int RentedLength(ReadBufferPool pool)
    {
        using var owner = pool.Rent(ReadBufferPool.SmallSize);
        Assert.True(MemoryMarshal.TryGetArray<byte>(owner.Memory, out var segment));
        return segment.Count;
    }
}
