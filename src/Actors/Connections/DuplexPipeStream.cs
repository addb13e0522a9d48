using System.IO.Pipelines;

namespace Courier.Actors.Connections;

/// <summary>
/// A bidirectional stream over two pipes: the server side of an in-process connection, so Courier's
/// own services (JetStream) are clients of the broker like any other, through the same pumps.
/// </summary>
internal sealed class DuplexPipeStream : Stream
{
    private readonly Stream _input;
    private readonly Stream _output;

    public DuplexPipeStream(PipeReader input, PipeWriter output)
    {
        _input = input.AsStream();
        _output = output.AsStream();
    }

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    /// <summary>Creates a connected pair: the server's stream and the client's two pipe ends.</summary>
    public static (DuplexPipeStream Server, PipeReader ClientInput, PipeWriter ClientOutput) CreatePair()
    {
        // The reader of each pipe continues on the writer's thread: a flush hands the batch straight to the
        // waiting reader instead of queueing it to the thread pool, one thread hop less each way (the
        // JetStream services' request, PubAck and delivery paths are round trips through these pipes).
        // Neither reader writes back into a pipe inline (their replies go through signalled write
        // loops), so this never recurses. A paused writer still resumes on the thread pool.
        var options = new PipeOptions(readerScheduler: PipeScheduler.Inline, useSynchronizationContext: false);
        var toServer = new Pipe(options);
        var toClient = new Pipe(options);
        return (new DuplexPipeStream(toServer.Reader, toClient.Writer), toClient.Reader, toServer.Writer);
    }

    public override int Read(byte[] buffer, int offset, int count) => _input.Read(buffer, offset, count);

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
        _input.ReadAsync(buffer, cancellationToken);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        _input.ReadAsync(buffer, offset, count, cancellationToken);

    public override void Write(byte[] buffer, int offset, int count) => _output.Write(buffer, offset, count);

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) =>
        _output.WriteAsync(buffer, cancellationToken);

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        _output.WriteAsync(buffer, offset, count, cancellationToken);

    public override void Flush() => _output.Flush();

    public override Task FlushAsync(CancellationToken cancellationToken) => _output.FlushAsync(cancellationToken);

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _input.Dispose();
            _output.Dispose();
        }

        base.Dispose(disposing);
    }
}
