using System.Net.Sockets;
using System.Threading.Tasks.Sources;

namespace Courier.Actors.Connections;

/// <summary>
/// Sends a list of buffers with one gathered socket send (sendmsg), awaited without allocating:
/// one reusable <see cref="SocketAsyncEventArgs"/> per connection, as Kestrel's SocketSender.
/// Not thread-safe: one send at a time (the caller serializes).
/// </summary>
internal sealed class SocketGatherSender : SocketAsyncEventArgs, IValueTaskSource<int>
{
    private readonly Socket _socket;
    private ManualResetValueTaskSourceCore<int> _source;

    public SocketGatherSender(Socket socket)
        : base(unsafeSuppressExecutionContextFlow: true)
    {
        _socket = socket;
        _source.RunContinuationsAsynchronously = false;
    }

    /// <summary>Sends every byte of <paramref name="buffers"/>; returns the bytes sent.</summary>
    public ValueTask<int> SendAsync(IList<ArraySegment<byte>> buffers)
    {
        _source.Reset();
        BufferList = buffers;
        if (!_socket.SendAsync(this))
        {
            Complete();
        }

        return new ValueTask<int>(this, _source.Version);
    }

    protected override void OnCompleted(SocketAsyncEventArgs e) => Complete();

    private void Complete()
    {
        var error = SocketError;
        var sent = BytesTransferred;
        BufferList = null;
        if (error == SocketError.Success)
        {
            _source.SetResult(sent);
        }
        else
        {
            _source.SetException(new SocketException((int)error));
        }
    }

    int IValueTaskSource<int>.GetResult(short token) => _source.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _source.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _source.OnCompleted(continuation, state, token, flags);
}
