using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Courier.Actors.Hosting;

namespace Courier.Actors.Connections;

internal abstract partial class Connection
{
    private int _idlePollCensus = -1; // the idle poll's census this connection was last counted in
    private string? _closeRequest;

    internal enum ReadOutcome
    {
        /// <summary>Everything complete was processed; read more.</summary>
        Continue,

        /// <summary>
        /// Stopped for something to complete first (<see cref="ContinueAsync"/>): pending SUB/UNSUB before a
        /// PUB (invariant 2), an MQTT CONNECT's session, a journal write before an acknowledgement.
        /// </summary>
        Wait,

        /// <summary>The connection must close (the reason is recorded).</summary>
        Close,
    }

    /// <summary>Processes every complete command in <paramref name="buffer"/>, slicing off what it consumed.</summary>
    internal abstract ReadOutcome Process(ref ReadOnlySequence<byte> buffer);

    /// <summary>Completes what <see cref="Process"/> stopped for; then processing goes on (or the connection closes).</summary>
    internal virtual async ValueTask<ReadOutcome> ContinueAsync()
    {
        await FlushSubscriptionChangesAsync().ConfigureAwait(false);
        return ReadOutcome.Continue;
    }

    /// <summary>After a read batch, before its deliveries are signalled (an MQTT session's acks).</summary>
    private protected virtual void OnBatchProcessed()
    {
    }

    /// <summary>After the last read, before the close is requested (an MQTT will).</summary>
    private protected virtual void OnReadEnded()
    {
    }

    /// <summary>
    /// The read pump: reads what arrived, processes it (waiting where the protocol must, see
    /// <see cref="ReadOutcome.Wait"/>), makes SUB/UNSUB of the batch effective, signals each outbound
    /// the batch touched once, and waits for stalled consumers before reading more.
    /// </summary>
    private protected async Task RunReadPumpAsync()
    {
        var buffers = new ReadBufferPool();
        var reader = PipeReader.Create(Transport.Stream, buffers.ReaderOptions());
        var closeReason = "Client Closed";
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync().ConfigureAwait(false);
                var buffer = result.Buffer;
                buffers.Observe(buffer.Length);
                var outcome = ReadOutcome.Continue;
                try
                {
                    while (true)
                    {
                        outcome = Process(ref buffer);
                        if (outcome != ReadOutcome.Wait)
                        {
                            break;
                        }

                        outcome = await ContinueAsync().ConfigureAwait(false);
                        if (outcome != ReadOutcome.Continue)
                        {
                            break;
                        }
                    }

                    if (_pendingChanges.Count > 0)
                    {
                        await FlushSubscriptionChangesAsync().ConfigureAwait(false);
                    }

                    OnBatchProcessed();
                    if (Publisher.Flush())
                    {
                        IdlePoll.Touch(ref _idlePollCensus); // a small batch: the next one is likely a reply away, worth a cheap wake-up
                    }
                }
                finally
                {
                    reader.AdvanceTo(buffer.Start, buffer.End);
                }

                if (Publisher.HasStalled)
                {
                    await Publisher.WaitForStalledConsumersAsync().ConfigureAwait(false);
                }

                if (outcome == ReadOutcome.Close)
                {
                    closeReason = _closeRequest ?? "Protocol Error";
                    break;
                }

                if (result.IsCompleted || IsClosed)
                {
                    break;
                }
            }
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
            closeReason = "Read Error";
        }
        catch (Exception e)
        {
            // A fault of Courier's own while handling this client's input: said in the log, and this client (only) is
            // closed, rather than left connected with nobody reading its socket.
            Log.ReadPumpFault(_log, Id, e);
            closeReason = "Server Error";
        }
        finally
        {
            await reader.CompleteAsync().ConfigureAwait(false);
        }

        OnReadEnded();
        RequestClose(closeReason);
    }

    /// <summary>The close reason <see cref="CloseWith"/> recorded, if any.</summary>
    private protected string? CloseRequest => _closeRequest;

    /// <summary>Ends processing with <paramref name="reason"/> as the close reason; the pump then closes.</summary>
    private protected ReadOutcome CloseWith(string reason)
    {
        _closeRequest = reason;
        return ReadOutcome.Close;
    }

    /// <summary>A protocol's JSON argument (CONNECT, INFO); false when it cannot be decoded. <c>null</c> reads as the defaults.</summary>
    private protected static bool TryReadJson<T>(ReadOnlySpan<byte> json, JsonTypeInfo<T> type, out T value)
        where T : class, new()
    {
        try
        {
            value = JsonSerializer.Deserialize(json, type) ?? new T();
            return true;
        }
        catch (JsonException)
        {
            value = null!;
            return false;
        }
    }

    /// <summary>Queues <c>-ERR</c> (if any) for the peer and ends processing (NATS clients and routes).</summary>
    private protected ReadOutcome Fatal(string? errorText, string reason)
    {
        if (errorText is not null)
        {
            WriteOwn(Protocols.Nats.ProtocolWriter.Error(errorText));
        }

        return CloseWith(reason);
    }
}
