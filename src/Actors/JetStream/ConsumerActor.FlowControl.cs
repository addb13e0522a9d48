using System.Globalization;
using System.Text;

namespace Courier.Actors.JetStream;

/// <summary>
/// Push consumer flow control (nats-server consumer.go needFlowControl/processFlowControl): the
/// consumer counts the bytes it pushed; past half its window it sends a
/// <c>100 FlowControl Request</c> with a <c>$JS.FC.</c> reply subject, and past the whole window it
/// stops until the client answers. Each answer frees the bytes sent before the request and doubles
/// the window, from 2 MiB up to 32 MiB. Idle heartbeats name the unanswered request
/// (<c>Nats-Consumer-Stalled</c>) so a client that missed it can answer.
/// </summary>
internal sealed partial class ConsumerActor
{
    private const int FlowControlMaxPending = 32 * 1024 * 1024; // bytes: the largest window, as nats-server JsFlowControlMaxPending

    private long _flowWindow; // bytes that may be outstanding now; 0 without flow control
    private long _flowPending; // bytes pushed and not yet freed by an answer
    private long _flowRequestSize; // bytes the outstanding request frees once answered
    private string? _flowRequest; // the outstanding request's reply subject

    /// <summary>Pushing waits for the client to answer a flow control request.</summary>
    private bool FlowControlStalled => _flowWindow > 0 && _flowPending > _flowWindow;

    private void StartFlowControl()
    {
        if (IsPush && _config.FlowControl)
        {
            _flowWindow = FlowControlMaxPending / 16; // slow start
        }
    }

    /// <summary>Counts one pushed message (deliver subject, ack reply, headers and payload) and asks for an answer past half the window.</summary>
    private void CountFlowControl(int size)
    {
        if (_flowWindow == 0)
        {
            return;
        }

        _flowPending += size;
        if (_flowRequest is null)
        {
            if (_flowPending > _flowWindow / 2)
            {
                SendFlowControlRequest();
            }
        }
        else if (_flowPending - _flowRequestSize >= _flowWindow)
        {
            _flowRequestSize += size;
        }
    }

    // NATS/1.0 100 FlowControl Request\r\n\r\n, to the deliver subject, replying to $JS.FC.<stream>.<consumer>.<4 random characters>
    private void SendFlowControlRequest()
    {
        const string Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        Span<char> suffix = stackalloc char[4];
        for (var i = 0; i < suffix.Length; i++)
        {
            suffix[i] = Alphabet[Random.Shared.Next(Alphabet.Length)];
        }

        _flowRequest = string.Concat($"$JS.FC.{_stream}.{_name}.", suffix);
        _flowRequestSize = _flowPending;
        _out.Publish(_config.DeliverSubject!, _flowRequest, "NATS/1.0 100 FlowControl Request\r\n\r\n"u8, default);
    }

    private void OnFlowControlResponse(Protocol.FlowControlResponse response)
    {
        if (response.Subject != _flowRequest)
        {
            return; // not the latest request: an old or stray answer
        }

        _flowWindow = Math.Min(_flowWindow * 2, FlowControlMaxPending);
        _flowPending = Math.Max(_flowPending - _flowRequestSize, 0);
        _flowRequest = null;
        _flowRequestSize = 0;
        _lastActivity = DateTime.UtcNow;
        Deliver();
    }

    // NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: <seq>\r\nNats-Last-Stream: <seq>\r\n[Nats-Consumer-Stalled: <fc reply>\r\n]\r\n
    private void SendIdleHeartbeat(string subject)
    {
        var header = new StringBuilder(128)
            .Append(CultureInfo.InvariantCulture, $"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: {_deliveredConsumer}\r\nNats-Last-Stream: {_deliveredStream}\r\n");
        if (_flowRequest is not null)
        {
            header.Append(CultureInfo.InvariantCulture, $"Nats-Consumer-Stalled: {_flowRequest}\r\n");
        }

        _out.Publish(subject, null, Encoding.ASCII.GetBytes(header.Append("\r\n").ToString()), default);
    }
}
