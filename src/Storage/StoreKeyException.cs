namespace Courier.Storage;

/// <summary>
/// An encrypted store or file cannot be opened: the configured key (and <c>prev_key</c>) does not
/// decrypt it, or it is encrypted and no key is configured. The message is nats-server's error text
/// (<c>unable to recover keys</c>, <c>encryption not enabled</c>); the server stops its start with it.
/// </summary>
public sealed class StoreKeyException : Exception
{
    /// <summary>Creates the exception with nats-server's error text.</summary>
    public StoreKeyException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with nats-server's error text and its cause.</summary>
    public StoreKeyException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    /// <summary>Creates the exception (serialization and analyzers want the parameterless form).</summary>
    public StoreKeyException()
    {
    }
}
