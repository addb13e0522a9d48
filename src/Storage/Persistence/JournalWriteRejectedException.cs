namespace Courier.Storage.Persistence;

/// <summary>Why the journal refused one atomic write (Akka's <c>WriteMessageRejected</c> cause); the others of the batch are not affected.</summary>
public sealed class JournalWriteRejectedException : Exception
{
    public JournalWriteRejectedException()
    {
    }

    public JournalWriteRejectedException(string message)
        : base(message)
    {
    }

    public JournalWriteRejectedException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
