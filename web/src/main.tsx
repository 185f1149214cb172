import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { AdminApp } from './admin/admin-app';
import { ChatApp } from './chat/chat-app';
import { usePath } from './common/navigation';
import './styles.css';

function Root() {
  const path = usePath();
  return path === '/admin' || path.startsWith('/admin/') ? <AdminApp /> : <ChatApp />;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);
